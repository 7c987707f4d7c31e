/**
 * The watchdog of a worker process: a `worker_threads` thread that watches the main thread's
 * event loop and reports a loop blocked longer than a threshold, naming the requests in flight.
 * Defence in depth behind the request budget (a script cannot loop forever, but a defect in
 * Laneway or in a native module could still hold the loop).
 *
 * It must work while the main thread is stuck, so nothing goes through the main thread's event
 * loop: the two threads share memory, and the report goes out by a plain write(2) on a file
 * descriptor the supervisor reads (`REPORT_FD`, a pipe of its own per worker).
 *
 * Shared memory (SharedArrayBuffer), written by the main thread, read by the watchdog:
 *
 *   heartbeat  Int32[1]              incremented by a timer of the main thread every `beatMs`
 *   states     Int32[SLOTS]          1 while slot i holds a request in flight, else 0
 *   lengths    Int32[SLOTS]          bytes of slot i's text
 *   numbers    Float64[2 * SLOTS]    slot i: [2i] start (ms since the epoch), [2i+1] sequence number
 *   text       Uint8[SLOTS * TEXT]   slot i: "<id> <method> <path>" in UTF-8, cut at TEXT bytes
 *   overflow   Int32[1]              requests in flight that found no free slot
 *
 * The main thread writes a slot's text and numbers, then publishes it with `Atomics.store` on its
 * state (and frees it the same way when the response closes): the watchdog reads a slot only
 * after an `Atomics.load` of its state has seen 1. When the loop is blocked, the main thread
 * writes nothing at all, so what the watchdog reads then is stable.
 *
 * The report names every request in flight; the one started last is marked `current`: when the
 * loop blocks in the synchronous part of a request (a request's first turn), that is the one.
 *
 * A thread the supervisor does not end (no supervisor reading the pipe any more) ends the process
 * itself after a second threshold, as a last resort.
 */
import { closeSync, writeSync } from 'node:fs';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, Worker, workerData } from 'node:worker_threads';
import type { ServerResponse } from 'node:http';

/** The file descriptor of a worker's report pipe (fd 4: stdin, stdout, stderr, the IPC channel, then this). */
export const REPORT_FD = 4;

const SLOTS = 64;
const TEXT = 240;
const THREAD_MARK = 'laneway-watchdog';

/** One request in flight, as the watchdog reports it. */
export interface InFlightRequest {
  id: string;
  method: string;
  path: string;
  /** Milliseconds since it started. */
  ageMs: number;
}

/** The line the watchdog writes to REPORT_FD (JSON, one line). */
export interface BlockedReport {
  type: 'blocked';
  /** How long the loop had not turned when the report was written. */
  blockedMs: number;
  thresholdMs: number;
  /** Oldest first; `current` marks the one started last. */
  requests: Array<InFlightRequest & { current: boolean }>;
  /** Requests in flight that the table had no room for. */
  untracked: number;
}

interface SharedTable {
  states: SharedArrayBuffer;
  lengths: SharedArrayBuffer;
  numbers: SharedArrayBuffer;
  text: SharedArrayBuffer;
  overflow: SharedArrayBuffer;
}

/** The main thread's side of the in-flight table. */
export class InFlightTable {
  readonly shared: SharedTable = {
    states: new SharedArrayBuffer(4 * SLOTS),
    lengths: new SharedArrayBuffer(4 * SLOTS),
    numbers: new SharedArrayBuffer(8 * 2 * SLOTS),
    text: new SharedArrayBuffer(TEXT * SLOTS),
    overflow: new SharedArrayBuffer(4),
  };
  readonly #states = new Int32Array(this.shared.states);
  readonly #lengths = new Int32Array(this.shared.lengths);
  readonly #numbers = new Float64Array(this.shared.numbers);
  readonly #text = new Uint8Array(this.shared.text);
  readonly #overflow = new Int32Array(this.shared.overflow);
  readonly #free: number[] = Array.from({ length: SLOTS }, (_, i) => SLOTS - 1 - i);
  readonly #encoder = new TextEncoder();
  #sequence = 0;

  /** Records a request until its response closes (a few bytes copied; no allocation beyond the closure). */
  track(id: string, method: string, path: string, res: ServerResponse): void {
    const slot = this.#free.pop();
    if (slot === undefined) {
      Atomics.add(this.#overflow, 0, 1);
      res.once('close', () => Atomics.sub(this.#overflow, 0, 1));
      return;
    }
    const { written } = this.#encoder.encodeInto(`${id} ${method} ${path}`, this.#text.subarray(slot * TEXT, (slot + 1) * TEXT));
    this.#lengths[slot] = written;
    this.#numbers[2 * slot] = Date.now();
    this.#numbers[2 * slot + 1] = ++this.#sequence;
    Atomics.store(this.#states, slot, 1);
    res.once('close', () => {
      Atomics.store(this.#states, slot, 0);
      this.#free.push(slot);
    });
  }
}

/** Reads the table (the watchdog thread, while the main thread is blocked). */
function readTable(shared: SharedTable): { requests: BlockedReport['requests']; untracked: number } {
  const states = new Int32Array(shared.states);
  const lengths = new Int32Array(shared.lengths);
  const numbers = new Float64Array(shared.numbers);
  const text = new Uint8Array(shared.text);
  const decoder = new TextDecoder();
  const now = Date.now();
  const found: Array<InFlightRequest & { sequence: number }> = [];
  for (let i = 0; i < SLOTS; i++) {
    if (Atomics.load(states, i) !== 1) continue;
    // A copy: TextDecoder does not read shared memory.
    const line = decoder.decode(text.slice(i * TEXT, i * TEXT + lengths[i]!));
    const [id = '', method = '', ...path] = line.split(' ');
    found.push({ id, method, path: path.join(' '), ageMs: Math.max(0, now - numbers[2 * i]!), sequence: numbers[2 * i + 1]! });
  }
  found.sort((a, b) => a.sequence - b.sequence);
  const last = found.length - 1;
  return {
    requests: found.map(({ sequence: _s, ...r }, i) => ({ ...r, current: i === last })),
    untracked: Atomics.load(new Int32Array(shared.overflow), 0),
  };
}

export interface WatchdogOptions {
  /** A loop that has not turned for this long is reported (default 10 000). */
  thresholdMs: number;
  table: InFlightTable;
  /** Where the report goes (default REPORT_FD). */
  fd?: number;
}

/** A running watchdog; `stop()` ends the thread and the heartbeat (a worker that drains). */
export interface Watchdog {
  stop(): Promise<void>;
}

/**
 * Starts the heartbeat and the thread. The heartbeat ticks every `thresholdMs / 10` (between 20 ms
 * and 1 s); the thread looks as often. Both timers are unref'd: they never keep the process alive.
 */
export function startWatchdog(options: WatchdogOptions): Watchdog {
  const heartbeat = new SharedArrayBuffer(4);
  const beats = new Int32Array(heartbeat);
  const beatMs = Math.min(1000, Math.max(20, Math.round(options.thresholdMs / 10)));
  const timer = setInterval(() => Atomics.add(beats, 0, 1), beatMs);
  timer.unref();
  // This module is the thread's code too (the thread runs it with THREAD_MARK in workerData). The
  // file is named from this directory's sibling, so that the command's bundle (dist/bundle/,
  // scripts/bundle.mjs) starts the thread with this one small module, not with the whole bundle.
  const self = new URL(`../supervisor/watchdog${extname(fileURLToPath(import.meta.url))}`, import.meta.url);
  const thread = new Worker(self, {
    workerData: { mark: THREAD_MARK, heartbeat, table: options.table.shared, thresholdMs: options.thresholdMs, beatMs, fd: options.fd ?? REPORT_FD },
    // The thread needs little: a small heap, no stdin.
    resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
    stdin: false,
  });
  thread.unref();
  // A thread that fails must not take the worker down: the worker serves on, unwatched.
  thread.on('error', (err) => process.stderr.write(`laneway: the watchdog thread failed: ${err.message}\n`));
  return {
    async stop() {
      clearInterval(timer);
      await thread.terminate();
    },
  };
}

/** The thread: looks at the heartbeat every `beatMs`. */
function runThread(data: { heartbeat: SharedArrayBuffer; table: SharedTable; thresholdMs: number; beatMs: number; fd: number }): void {
  const beats = new Int32Array(data.heartbeat);
  let seen = Atomics.load(beats, 0);
  let turned = performance.now();
  let looked = turned;
  let reported = false;
  const write = (line: string, fd: number): boolean => {
    try {
      writeSync(fd, line);
      return true;
    } catch {
      return false;
    }
  };
  setInterval(() => {
    const now = performance.now();
    // This thread itself did not run for a long while (the whole process was stopped or starved):
    // the main thread had no chance either, so nothing is concluded from this look.
    const asleep = now - looked > data.thresholdMs / 2;
    looked = now;
    const beat = Atomics.load(beats, 0);
    if (beat !== seen || asleep) {
      seen = beat;
      turned = now;
      reported = false;
      return;
    }
    const blockedMs = now - turned;
    if (!reported && blockedMs >= data.thresholdMs) {
      reported = true;
      const report: BlockedReport = { type: 'blocked', blockedMs: Math.round(blockedMs), thresholdMs: data.thresholdMs, ...readTable(data.table) };
      const line = JSON.stringify(report) + '\n';
      if (!write(line, data.fd)) write(`laneway: worker ${process.pid}: the event loop is blocked: ${line}`, 2);
    } else if (reported && blockedMs >= 2 * data.thresholdMs + 5_000) {
      // Nobody ended the process after the report (no supervisor): end it, it serves nobody.
      write(`laneway: worker ${process.pid}: the event loop has been blocked for ${Math.round(blockedMs / 1000)} s and no supervisor ended the process; ending it\n`, 2);
      try {
        closeSync(data.fd);
      } catch {
        // already closed
      }
      process.kill(process.pid, 'SIGKILL');
    }
  }, data.beatMs);
}

if (!isMainThread && (workerData as { mark?: unknown } | null)?.mark === THREAD_MARK) {
  runThread(workerData as Parameters<typeof runThread>[0]);
}
