// Types of soak.mjs (a plain ESM script, run by `npm run soak` and imported by soak.test.ts).

export interface SoakOptions {
  /** Length of the load-and-kill phase (SOAK_SECONDS). */
  seconds: number;
  /** One worker killed this often (SOAK_KILL_EVERY_SECONDS). */
  killEverySeconds: number;
  /** Concurrent clients (SOAK_CONNECTIONS). */
  connections: number;
  /** The server's --watchdog-ms. */
  watchdogMs: number;
  /** Last third's median RSS at most (1 + this) × the first third's (SOAK_MEMORY_TOLERANCE). */
  memoryTolerance: number;
  /** A request not answered within this long is lost. */
  requestTimeoutMs: number;
  sampleEveryMs: number;
  /** Load goes on this long after the blocked worker's replacement listens. */
  afterSeconds: number;
  /** Each client's pause between two requests. */
  pauseMs: number;
  /** Count connections stranded in the supervisor as lost requests (the default; SOAK_STRICT=0: apart). */
  strict: boolean;
  /** Progress lines. */
  log?: (line: string) => void;
}

export interface SoakKill {
  n: number;
  why: 'SIGKILL' | 'blocked';
  pid: number;
  slot: 'A' | 'B' | undefined;
  /** Connections the worker held when killed. */
  held: number;
  /** Requests that failed on them. */
  failed: number;
  stranded: number;
  replacedBy?: number;
  replacedAfterMs?: number;
}

export interface SoakFigures {
  date: string;
  seconds: number;
  killEverySeconds: number;
  connections: number;
  watchdogMs: number;
  requests: number;
  answered: number;
  failed: number;
  lost: number;
  stranded: number;
  byKind: Record<string, { sent: number; ok: number }>;
  connectionsOpened: number;
  kills: SoakKill[];
  block: {
    pid?: number;
    slot?: string;
    reportedAfterMs?: number;
    blockedMs?: number;
    killedAfterMs?: number;
    replacedBy?: number;
    replacedAfterMs?: number;
    answeredMeanwhile?: number;
    held?: number;
    request?: string;
  };
  memory: Array<{ series: string; processes: number; samples: number; firstThirdMB: number; lastThirdMB: number; maxMB: number; growth: number; tenthsMB: number[] }>;
  database: { present: number; missing: number; extra: number; unknown: number; rows?: number };
  restarts?: { crashed: number; blocked: number };
}

export interface SoakResult {
  ok: boolean;
  problems: string[];
  report: string;
  figures: SoakFigures;
}

export const DEFAULTS: Readonly<Omit<SoakOptions, 'log'>>;
export const FIXTURE: string;
export function optionsFromEnv(env?: Record<string, string | undefined>): Pick<SoakOptions, 'seconds' | 'killEverySeconds' | 'connections' | 'memoryTolerance' | 'strict'>;
export function connectionsOf(pid: number, serverPort: number): Set<number>;
export function runSoak(options?: Partial<SoakOptions>): Promise<SoakResult>;
