import { performance } from "node:perf_hooks";
import { executionStatusForCode } from "../errors/error-catalogue.js";
import type { SkillboxError } from "../errors/skillbox-error.js";
import type { InterceptorChain } from "../interceptors/interceptor-chain.js";
import type { FinishFailureReport, InterceptorPass } from "../interceptors/interceptor-pass.js";
import { isPromiseLike } from "../is-promise-like.js";
import type { SkillRuntime } from "../runtime/skill-runtime.js";
import type {
  ExecuteOptions,
  ExecutionError,
  ExecutionRecordFields,
  ExecutionStatus,
  Skill,
  SkillExecution,
  SkillHandler,
} from "../types.js";
import { createExecutionId } from "./create-execution-id.js";
import { ExecutionContext } from "./execution-context.js";
import { serialize, toSkillboxError } from "./execution-outcome.js";
import type { ExecutionPort } from "./execution-port.js";
import { ExecutionState } from "./execution-state.js";
import type { ExecutionStore } from "./execution-store.js";
import type { ExecutionTimeouts } from "./execution-timeouts.js";
import { findOverDeepPath } from "./find-over-deep-path.js";
import { formatTimestamp } from "./format-timestamp.js";
import type { HostShutdown } from "./host-shutdown.js";
import type { LazyAbortSignal } from "./lazy-abort-signal.js";
import { type RetriedRun, runWithRetries } from "./run-with-retries.js";
import type { SchemaValidator } from "./schema-validator.js";

/** Events an execution reports to the executor's listeners. */
export type ExecutionEvent = "started" | "finished";

/**
 * What every execution of one executor shares: where it records, validates, finds runtimes and
 * handlers, and whom it tells. Built once by the executor; an {@link ExecutionRun} sees nothing else.
 */
export interface ExecutionServices {
  store: ExecutionStore;
  validator: SchemaValidator;
  timeouts: ExecutionTimeouts;
  interceptors: InterceptorChain;
  shutdown: HostShutdown;
  /** What handlers and interceptors reach through their context. */
  port: ExecutionPort;
  /** Deepest nesting of objects and arrays accepted in an input or output. */
  maxNestingDepth: number;
  /** The runtime `skill.runtime` names; throws `RUNTIME_NOT_FOUND` when the executor has none. */
  runtimeFor(skill: Skill): SkillRuntime;
  resolveHandler(skill: Skill): SkillHandler | Promise<SkillHandler>;
  /** Whether anyone listens to `event`: the record is copied for `started` only then. */
  listening(event: ExecutionEvent): boolean;
  notify(event: ExecutionEvent, execution: SkillExecution): void;
  reportFinishFailure: FinishFailureReport;
}

/** What {@link ExecutionRun} runs. */
export interface ExecutionRequest {
  skill: Skill;
  input: unknown;
  options: ExecuteOptions;
  /** The caller's owner id. */
  caller: string;
  /** 0 for a top-level execution, parent's depth + 1 for `ctx.call`. */
  depth: number;
  /** `hashInput` of the input, stored for executions with an idempotency key. */
  inputHash: string | null;
}

/** How the phases between start and finish ended. */
interface Outcome {
  status: ExecutionStatus;
  output: unknown;
  error: ExecutionError | null;
}

/** The record while it is built: its status and outcome change once, at the finish. */
interface RecordUnderWay extends ExecutionRecordFields {
  status: ExecutionStatus;
  output: unknown;
  error: ExecutionError | null;
}

/**
 * One execution, from its `running` row to its final one. It owns what the execution is made of
 * — the skill, the call's options, the caller and depth, its interceptor pass, its timings, its
 * attempts and its record — and runs its phases in order:
 *
 * 1. `start`: the audited input and the `running` row, committed before anything runs;
 * 2. `before` hooks, then input validation;
 * 3. the attempts (see `runWithRetries`), each one `attempt()` in a runtime;
 * 4. `after` hooks and output checks — or `onError` hooks when any of 2–4 failed;
 * 5. `finish`: the final row, committed before the record is returned, then `onFinish` hooks.
 */
export class ExecutionRun implements RetriedRun {
  readonly skill: Skill;
  readonly options: ExecuteOptions;
  /** `performance.now()` at the start: durations and the overall deadline count from it. */
  readonly startedAt = performance.now();
  readonly timeouts: ExecutionTimeouts;
  readonly shutdown: HostShutdown;
  /** Attempts started so far. */
  attempts = 0;
  private readonly services: ExecutionServices;
  private readonly inputHash: string | null;
  private readonly createdAt = Date.now();
  private readonly context: ExecutionState;
  private readonly pass: InterceptorPass;
  private readonly record: RecordUnderWay;
  /** Where the input nests too deep to be looked at, if it does: then nothing runs. */
  private readonly overDeepInput: string | undefined;
  private readonly storedInput: unknown;

  constructor(services: ExecutionServices, request: ExecutionRequest) {
    const { skill, options } = request;
    this.services = services;
    this.skill = skill;
    this.options = options;
    this.inputHash = request.inputHash;
    this.timeouts = services.timeouts;
    this.shutdown = services.shutdown;
    // Time-ordered ids keep inserts at the right edge of the primary-key index: far fewer
    // dirty pages per commit than random v4 ids.
    const id = createExecutionId(this.createdAt);
    const parentExecutionId = options.parentExecutionId ?? null;
    const sessionId = options.sessionId ?? null;
    this.context = new ExecutionState({
      port: services.port,
      skill,
      input: request.input,
      executionId: id,
      parentExecutionId,
      apiKeyId: request.caller,
      sessionId,
      depth: request.depth,
    });
    this.pass = services.interceptors.open(skill, this.context, services.reportFinishFailure);
    // Checked before audit hooks and the row: both would walk the value recursively.
    this.overDeepInput = findOverDeepPath(request.input, services.maxNestingDepth, "input");
    this.storedInput =
      this.overDeepInput === undefined
        ? this.pass.audit("input", request.input)
        : `[not stored: nested deeper than ${services.maxNestingDepth} levels]`;
    this.record = {
      id,
      skillId: skill.id,
      skillName: skill.name,
      skillVersion: skill.version,
      apiKeyId: request.caller,
      sessionId,
      parentExecutionId,
      idempotencyKey: options.idempotencyKey ?? null,
      input: this.overDeepInput === undefined ? request.input : this.storedInput,
      output: null,
      status: "running",
      error: null,
      attempts: 0,
      duration: null,
      createdAt: formatTimestamp(this.createdAt),
      finishedAt: null,
    };
  }

  /** Runs every phase; resolves with the final record once its row is committed. */
  async run(): Promise<SkillExecution> {
    const rowid = await this.start();
    const outcome =
      this.overDeepInput === undefined
        ? await this.lifecycle()
        : this.tooDeep("INPUT_INVALID", this.overDeepInput);
    await this.finish(rowid, outcome);
    return this.finished();
  }

  /** Commits the `running` row; resolves with its rowid once listeners of `started` were told. */
  private start(): Promise<number> {
    const { services, record } = this;
    const committed = services.store.start(
      record,
      serialize(this.storedInput),
      this.createdAt,
      this.inputHash,
    );
    if (!services.listening("started")) return committed;
    return committed.then((rowid) => {
      services.notify("started", { ...record } as SkillExecution);
      return rowid;
    });
  }

  /** `before`, the attempts and `after` — or `onError` once any of them failed. */
  private async lifecycle(): Promise<Outcome> {
    const { pass, services, skill } = this;
    try {
      let output: unknown;
      const entering = pass.before();
      // No await for synchronous hooks: each await is a turn every execution pays.
      const before = isPromiseLike(entering) ? await entering : entering;
      if (before.shortCircuited) {
        output = before.output;
      } else {
        // Validated after `before` hooks: the schema guards what the handler actually receives,
        // including input that a context-injecting interceptor completed.
        services.validator.validateInput(skill, this.context.input);
        const ran = await runWithRetries(this);
        this.attempts = ran.attempts;
        if (!ran.succeeded) throw ran.error;
        output = ran.output;
      }
      const checked = this.after(output);
      return isPromiseLike(checked) ? await checked : checked;
    } catch (thrown) {
      return await this.onError(toSkillboxError(thrown, skill));
    }
  }

  /** `after` hooks and the output checks of a successful run; synchronous unless a hook is not. */
  private after(handlerOutput: unknown): Outcome | Promise<Outcome> {
    // Checked before `after` hooks and the output schema: either may walk the value recursively.
    const overDeepOutput = findOverDeepPath(handlerOutput, this.services.maxNestingDepth, "output");
    // Not an error the hooks may recover from: the value cannot be looked at safely.
    if (overDeepOutput !== undefined) return this.tooDeep("OUTPUT_INVALID", overDeepOutput);
    const leaving = this.pass.after(handlerOutput, this);
    if (isPromiseLike(leaving))
      return Promise.resolve(leaving).then((output) => this.checkOutput(handlerOutput, output));
    return this.checkOutput(handlerOutput, leaving);
  }

  /** The output the `after` hooks left, checked for depth (when they replaced it) and against the schema. */
  private checkOutput(handlerOutput: unknown, output: unknown): Outcome {
    if (output !== handlerOutput) {
      // Walked again only when a hook replaced it: the hot path pays one walk.
      const overDeepOutput = findOverDeepPath(output, this.services.maxNestingDepth, "output");
      if (overDeepOutput !== undefined) return this.tooDeep("OUTPUT_INVALID", overDeepOutput);
    }
    this.services.validator.validateOutput(this.skill, output);
    return { status: "success", output, error: null };
  }

  /** `onError` hooks of the entered layers; the outcome they leave. */
  private async onError(failure: SkillboxError): Promise<Outcome> {
    const recovering = this.pass.onError(failure);
    const recovery = isPromiseLike(recovering) ? await recovering : recovering;
    if (recovery.recovered) return { status: "success", output: recovery.output, error: null };
    const { error } = recovery;
    return {
      status: executionStatusForCode(error.code),
      output: null,
      error: error.data === undefined ? { code: error.code, message: error.message } : error.toJSON(),
    };
  }

  /** One attempt in the skill's runtime (called by `runWithRetries`). */
  invoke(attempt: number, abort: LazyAbortSignal): Promise<unknown> {
    const { services, skill, context } = this;
    const runtime = services.runtimeFor(skill);
    return runtime.run({
      skill,
      input: context.input,
      context: new ExecutionContext(context, attempt, abort),
      abort,
      depth: context.depth,
      resolveHandler: () => services.resolveHandler(skill),
    });
  }

  /** Logs the retry ahead of another attempt (called by `runWithRetries`). */
  onRetry(retry: { attempt: number; delay: number; error: unknown }): void {
    this.context.logger.debug("retrying", {
      skill: `${this.skill.name}@${this.skill.version}`,
      attempt: retry.attempt,
      delay: retry.delay,
      code: (retry.error as SkillboxError).code,
    });
  }

  /** Commits the final row; resolves once it is on disk. */
  private finish(rowid: number, outcome: Outcome): Promise<unknown> {
    const { record } = this;
    const finishedAt = Date.now();
    const duration = performance.now() - this.startedAt;
    const storedOutput = outcome.output === null ? null : this.pass.audit("output", outcome.output);
    record.output = outcome.output ?? null;
    record.status = outcome.status;
    record.error = outcome.error;
    record.attempts = this.attempts;
    record.duration = duration;
    record.finishedAt = formatTimestamp(finishedAt);
    return this.services.store.finish({
      rowid,
      id: record.id,
      status: outcome.status,
      outputJson: serialize(storedOutput ?? null),
      error: outcome.error,
      attempts: this.attempts,
      duration,
      finishedAt,
    });
  }

  /** The committed record, handed to `onFinish` hooks and `finished` listeners, then to the caller. */
  private finished(): SkillExecution {
    const { services } = this;
    const execution = this.record as SkillExecution;
    this.pass.finish(execution);
    if (services.listening("finished")) services.notify("finished", execution);
    return execution;
  }

  /** The outcome of an input or output nested deeper than `maxNestingDepth`: no hook sees it. */
  private tooDeep(code: "INPUT_INVALID" | "OUTPUT_INVALID", path: string): Outcome {
    const { skill } = this;
    const { maxNestingDepth } = this.services;
    const field = code === "INPUT_INVALID" ? "input" : "output";
    const fix =
      code === "INPUT_INVALID"
        ? "send a flatter value"
        : "return a flatter value (a tree as a list of nodes with parent ids)";
    return {
      status: "error",
      output: null,
      error: {
        code,
        message:
          `${skill.name}@${skill.version}: \`${field}\` nests objects and arrays deeper than ${maxNestingDepth} ` +
          `levels (at ${path}); ${fix}, or raise the host's \`maxNestingDepth\``,
        data: { path, maxDepth: maxNestingDepth },
      },
    };
  }
}
