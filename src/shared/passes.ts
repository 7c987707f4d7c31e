/**
 * One pass at a time, on a timer and on demand: the loop of the background workers (the mail
 * outbox, image processing). `kick()` answers when a pass that began after it has finished; kicks
 * made while a pass runs share the one pass queued behind it. The timer is unref'd, so a worker
 * never keeps a process alive; `stop()` waits for the pass running.
 */
export class Passes {
  readonly #run: () => Promise<void>;
  readonly #everyMs: number;
  #timer: NodeJS.Timeout | undefined;
  #pass: Promise<void> | undefined;
  #next: Promise<void> | undefined;
  #stopped = false;

  /** `run` must not reject (a worker logs its own failures). */
  constructor(run: () => Promise<void>, everyMs: number) {
    this.#run = run;
    this.#everyMs = everyMs;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  get started(): boolean {
    return this.#timer !== undefined;
  }

  /** Runs a pass every `everyMs`, and one now. False when already started or stopped. */
  start(): boolean {
    if (this.#stopped || this.#timer) return false;
    this.#timer = setInterval(() => void this.kick(), this.#everyMs);
    this.#timer.unref();
    void this.kick();
    return true;
  }

  kick(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (!this.#pass) {
      const pass = this.#run().finally(() => {
        if (this.#pass === pass) this.#pass = undefined;
      });
      this.#pass = pass;
      return pass;
    }
    this.#next ??= this.#pass.then(() => {
      this.#next = undefined;
      return this.kick();
    });
    return this.#next;
  }

  /** Stops the timer and further kicks; waits for the pass running. False when already stopped. */
  async stop(): Promise<boolean> {
    if (this.#stopped) return false;
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#pass;
    return true;
  }
}
