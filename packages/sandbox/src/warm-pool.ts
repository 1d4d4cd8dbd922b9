import type { Attributes } from "@opentelemetry/api";
import type { StartedSandbox } from "./started-sandbox.js";
import { type ObservedWarmPool, warmPoolGauge } from "./warm-pool-gauge.js";

/**
 * Sandboxes started ahead of time, each taking exactly one job and then discarded: a sandbox
 * is never reused, so no state crosses from one execution (or one owner) to the next. The
 * owner calls `fill()` once a job is done, so a replacement's start-up (hundreds of ms of
 * engine CPU) does not compete with the job it was taken for.
 *
 * From construction to `close()` the pool's ready sandboxes are reported by the process's
 * `skillbox.sandbox.warm_pool.sandboxes` gauge (see `warmPoolGauge`), under the skill it warms.
 */
export class WarmPool implements ObservedWarmPool {
  /** The gauge point's attributes: the skill this pool warms. */
  readonly attributes: Attributes;
  private readonly idle: StartedSandbox[] = [];
  private starting = 0;
  private closed = false;
  private readonly waiters: Array<() => void> = [];

  /** `skill`, when given, names the gauge's point (`gen_ai.tool.name`, `skillbox.skill.version`). */
  constructor(
    private readonly size: number,
    private readonly start: () => Promise<StartedSandbox>,
    private readonly onError: (error: unknown) => void,
    skill?: { name: string; version: string },
  ) {
    this.attributes =
      skill === undefined ? {} : { "gen_ai.tool.name": skill.name, "skillbox.skill.version": skill.version };
    warmPoolGauge.track(this);
  }

  /** Sandboxes started and waiting for their job (those that ended while idle not counted). */
  get readyCount(): number {
    let ready = 0;
    for (const sandbox of this.idle) if (sandbox.running) ready++;
    return ready;
  }

  /** How many sandboxes it keeps (`size`), holds ready, and is starting: what `describe()` shows. */
  state(): { size: number; ready: number; starting: number } {
    return { size: this.size, ready: this.readyCount, starting: this.starting };
  }

  /** A started sandbox waiting for its job, or `undefined` when none is ready. */
  take(): StartedSandbox | undefined {
    let sandbox = this.idle.shift();
    // A sandbox that ended while idle (its engine failed, it was killed) cannot take a job.
    while (sandbox !== undefined && !sandbox.running) sandbox = this.idle.shift();
    return sandbox;
  }

  /** Starts sandboxes until `size` are idle or starting. */
  fill(): void {
    // An application may install its SDK after the pool started: the gauge follows it.
    warmPoolGauge.refresh();
    while (!this.closed && this.idle.length + this.starting < this.size) {
      this.starting++;
      this.start().then(
        (sandbox) => {
          this.starting--;
          if (this.closed) {
            void sandbox.kill();
            return;
          }
          this.idle.push(sandbox);
          const forget = () => {
            const index = this.idle.indexOf(sandbox);
            if (index !== -1) this.idle.splice(index, 1);
          };
          sandbox.result.then(forget, forget);
          this.wake();
        },
        (error: unknown) => {
          this.starting--;
          this.onError(error);
          this.wake();
        },
      );
    }
  }

  /** Resolves once every slot holds a started sandbox (or a start failed). */
  async ready(): Promise<void> {
    this.fill();
    while (!this.closed && this.idle.length < this.size && this.starting > 0) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Kills the idle sandboxes and starts no more. */
  async close(): Promise<void> {
    this.closed = true;
    warmPoolGauge.untrack(this);
    this.wake();
    const idle = this.idle.splice(0);
    await Promise.all(idle.map((sandbox) => sandbox.kill()));
  }

  private wake(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}
