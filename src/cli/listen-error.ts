/**
 * Why a server could not listen, in words that say what to change (`--port`, `--host`), and,
 * when its port is taken, which process holds it. Finding the process is Linux only, from /proc:
 * the listening sockets of /proc/net/tcp and tcp6 give the socket's inode, and the process whose
 * /proc/<pid>/fd holds a link to `socket:[inode]` owns it. Nothing is run (no `ss` or `lsof`).
 * Processes of other users cannot be read: then, on another system, or when anything fails, the
 * message names only the flag to change.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface PortHolder {
  pid: number;
  /** The process name, as `ps` shows it (`node`, `nginx`). */
  name: string;
}

/** At most this many processes are looked at: the search stays cheap on a crowded machine. */
const MAX_PROCESSES = 20_000;

export function findPortHolder(port: number): PortHolder | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const inodes = listeningInodes(port);
    if (inodes.size === 0) return undefined;
    const pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
    for (const pid of pids.slice(0, MAX_PROCESSES)) {
      let fds: string[];
      try {
        fds = readdirSync(`/proc/${pid}/fd`);
      } catch {
        continue; // another user's process, or gone
      }
      for (const fd of fds) {
        let link: string;
        try {
          link = readlinkSync(`/proc/${pid}/fd/${fd}`);
        } catch {
          continue;
        }
        const m = /^socket:\[(\d+)\]$/.exec(link);
        if (m && inodes.has(m[1]!)) return { pid: Number(pid), name: nameOf(pid) };
      }
    }
  } catch {
    // /proc missing or unreadable: nothing to say.
  }
  return undefined;
}

/**
 * Inodes of the sockets listening on `port`. A line of /proc/net/tcp reads
 * `sl local_address rem_address st … uid timeout inode`, addresses as `HEXIP:HEXPORT`, and the
 * state `0A` is LISTEN.
 */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const local = fields[1]!;
      const localPort = parseInt(local.slice(local.lastIndexOf(':') + 1), 16);
      if (localPort === port && fields[3] === '0A' && fields[9] !== '0') inodes.add(fields[9]!);
    }
  }
  return inodes;
}

/**
 * The process's name (`/proc/<pid>/comm`, as `ps` shows it), not its command line: arguments may
 * hold secrets (a database URL with its password), and this ends up in logs.
 */
function nameOf(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() || 'a process';
  } catch {
    return 'a process';
  }
}

/**
 * The message of a failed `listen`: the cause, the flag to change and, for a port in use, the
 * process that holds it when it can be found. `fields` are for a JSON log line.
 */
export function describeListenError(err: unknown, host: string, port: number): { message: string; fields: Record<string, unknown> } {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const fields: Record<string, unknown> = { code, host, port };
  if (code === 'EADDRINUSE') {
    const holder = findPortHolder(port);
    if (holder) Object.assign(fields, { pid: holder.pid, process: holder.name });
    const who = holder ? `${holder.name} (pid ${holder.pid})` : 'another program';
    const next = port > 0 && port < 65535 ? `--port ${port + 1}, or ` : '';
    return { message: `port ${port} on ${host} is already in use by ${who}: stop it, or choose another port with --port (${next}--port 0 for any free port)`, fields };
  }
  if (code === 'EACCES') {
    return { message: `port ${port} on ${host} needs privileges this process does not have (ports below 1024 usually do): choose another port with --port, such as --port 3000`, fields };
  }
  if (code === 'EADDRNOTAVAIL') {
    return { message: `--host ${host}: this machine has no network interface with that address: choose another with --host (127.0.0.1 for this machine only, 0.0.0.0 for every interface)`, fields };
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return { message: `--host ${host}: no such host name: give an address (127.0.0.1, 0.0.0.0) or a name of this machine with --host`, fields };
  }
  return { message: `cannot listen on ${host}:${port}: ${(err as Error)?.message ?? String(err)}`, fields };
}
