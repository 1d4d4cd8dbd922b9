import {
  reviveError,
  type SerializedError,
  type Skill,
  SkillboxError,
  type SkillContext,
  type SkillLogger,
  type SkillRuntime,
} from "@skillbox/core";
import { sandboxRunner } from "./default-sandbox-runner.js";
import { planHandlerSandbox } from "./handler-sandbox-plan.js";
import type { SandboxRunner } from "./sandbox-runner.js";
import type { SandboxConfig, SandboxResult } from "./sandbox-types.js";
import type { StartedSandbox } from "./started-sandbox.js";
import { WarmPool } from "./warm-pool.js";

/** Options of {@link createContainerRuntime}. */
export interface ContainerRuntimeOptions {
  /** The runner to use (default: `sandboxRunner`). */
  runner?: SandboxRunner;
  /** The image of handler skills whose sandbox block names none. */
  defaultImage?: string;
  /** Sandboxes started ahead of time per skill version; a skill's `sandbox.warmPool` overrides it. Default 0. */
  warmPoolSize?: number;
  /** Where warm-pool start failures are reported (default: ignored; the next job starts cold). */
  onWarmPoolError?: (error: unknown, skill: Skill) => void;
}

/** The container runtime, with warm-pool control. */
export interface ContainerRuntime extends SkillRuntime {
  /** Fills the skill's warm pool and resolves once its sandboxes are started. */
  warmUp(skill: Skill): Promise<void>;
}

/** The default image of handler skills: the one `scripts/build-test-image.sh` builds. */
export const DEFAULT_SANDBOX_IMAGE = "localhost/skillbox-node:latest";

/** How much of stderr an error message quotes. */
const STDERR_TAIL_BYTES = 2_000;
/** podman and docker exit with 125 when the engine itself fails (no such image, bad flag). */
const ENGINE_FAILURE_EXIT_CODE = 125;

interface JobPlan {
  mode: "command" | "handler";
  image: string;
  command: string[];
  env: Record<string, string>;
  config: SandboxConfig;
}

interface ResultLine {
  ok: boolean;
  output?: unknown;
  error?: SerializedError;
}

function label(skill: Skill): string {
  return `${skill.name}@${skill.version}`;
}

function stderrTail(result: SandboxResult): string {
  const text = result.stderr.trim();
  return text.length > STDERR_TAIL_BYTES ? `…${text.slice(-STDERR_TAIL_BYTES)}` : text;
}

/** The error for a sandbox that ended without a usable answer. */
function failure(skill: Skill, result: SandboxResult, config: SandboxConfig): SkillboxError {
  const stderr = stderrTail(result);
  const data = { exitCode: result.exitCode, stderr, sandboxId: result.id, provider: result.provider };
  if (result.oomKilled) {
    return new SkillboxError(
      "OUT_OF_MEMORY",
      `${label(skill)} ran out of memory in its sandbox (limit ${config.memoryMb ?? "none"} MiB); raise sandbox.memoryMb`,
      { data },
    );
  }
  if (result.killed) {
    return new SkillboxError("SANDBOX_FAILED", `${label(skill)}: its sandbox was killed`, { data });
  }
  if (result.exitCode === ENGINE_FAILURE_EXIT_CODE) {
    return new SkillboxError(
      "SANDBOX_FAILED",
      `${label(skill)}: the ${result.provider} engine could not start the sandbox: ${stderr || "no message"}`,
      { data, retryable: false },
    );
  }
  return new SkillboxError(
    "HANDLER_ERROR",
    `${label(skill)} exited with code ${result.exitCode}${stderr ? `: ${stderr}` : " and no message on stderr"}`,
    { data },
  );
}

/** Forwards the sandbox's stderr to the execution's logger: JSON lines at their level, the rest as info. */
function forwardLogs(stderr: string, logger: SkillLogger): void {
  for (const line of stderr.split("\n")) {
    if (line.trim() === "") continue;
    try {
      const { level, message, time: _time, ...fields } = JSON.parse(line) as Record<string, unknown>;
      if (
        typeof message === "string" &&
        (level === "debug" || level === "info" || level === "warn" || level === "error")
      ) {
        logger[level](message, fields);
        continue;
      }
    } catch {
      // Not a log entry: plain output.
    }
    logger.info(line, { stream: "stderr" });
  }
}

/** The output of a command skill: its stdout as JSON (empty stdout is `null`). */
function parseCommandOutput(skill: Skill, result: SandboxResult): unknown {
  if (result.truncated) {
    throw new SkillboxError(
      "OUTPUT_INVALID",
      `${label(skill)} printed more than the sandbox's output limit; print only the output JSON on stdout and logs on stderr`,
    );
  }
  const text = result.stdout.trim();
  if (text === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new SkillboxError(
      "HANDLER_ERROR",
      `${label(skill)} printed something that is not JSON on stdout (${JSON.stringify(text.slice(0, 200))}); ` +
        "print only the output JSON on stdout and logs on stderr",
    );
  }
}

/** The runner's first line, printed once the handler module is loaded. */
const READY_LINE = '{"ready":true}';

/** Waits until the runner in `sandbox` has loaded the handler (handler skills only). */
async function untilReady(sandbox: StartedSandbox): Promise<StartedSandbox> {
  const line = await sandbox.readLine();
  if (line !== READY_LINE && line !== undefined) {
    throw new SkillboxError(
      "SANDBOX_FAILED",
      `the sandbox runner printed ${JSON.stringify(line)} before its ready mark`,
    );
  }
  return sandbox;
}

/** The runner's result line, or `undefined` when the sandbox ended without one. */
async function resultLine(sandbox: StartedSandbox): Promise<ResultLine | undefined> {
  let line = await sandbox.readLine();
  if (line === READY_LINE) line = await sandbox.readLine();
  return line === undefined ? undefined : (JSON.parse(line) as ResultLine);
}

/**
 * The `container` runtime: each execution of a skill with `runtime: "container"` runs in a
 * fresh sandbox. With `sandbox.command`, the input JSON goes to the command's stdin and its
 * stdout is the output JSON; without one, Skillbox's runner loads the skill's own handler
 * inside the sandbox (no Dockerfile needed). Timeouts and cancellation kill the sandbox.
 */
export function createContainerRuntime(options: ContainerRuntimeOptions = {}): ContainerRuntime {
  const runner = options.runner ?? sandboxRunner;
  const plans = new Map<string, Promise<JobPlan>>();
  const pools = new Map<string, { key: string; pool: WarmPool }>();

  const keyOf = (skill: Skill) => `${skill.id}:${skill.contentHash}`;

  async function buildPlan(skill: Skill): Promise<JobPlan> {
    const settings = skill.sandbox ?? {};
    const config: SandboxConfig = {
      memoryMb: settings.memoryMb ?? skill.memoryMb,
      cpus: settings.cpus,
      pidsLimit: settings.pidsLimit,
      network: settings.network ?? false,
      // The executor owns time limits and aborts the signal; the sandbox has none of its own.
      timeout: 0,
    };
    const env = { SKILLBOX_SKILL: label(skill) };
    if (settings.command !== undefined && settings.command.length > 0) {
      if (settings.image === undefined) {
        throw new SkillboxError(
          "REGISTRATION_INVALID",
          `${label(skill)}: sandbox.command needs sandbox.image, the image to run it in`,
        );
      }
      return { mode: "command", image: settings.image, command: settings.command, env, config };
    }
    const provider = await runner.getProvider();
    const handler = planHandlerSandbox(skill, provider.usesImages);
    return {
      mode: "handler",
      image: settings.image ?? options.defaultImage ?? DEFAULT_SANDBOX_IMAGE,
      command: handler.command,
      env,
      config: { ...config, mounts: handler.mounts },
    };
  }

  function planFor(skill: Skill): Promise<JobPlan> {
    const key = keyOf(skill);
    let plan = plans.get(key);
    if (plan === undefined) {
      plan = buildPlan(skill);
      plans.set(key, plan);
      plan.catch(() => plans.delete(key));
    }
    return plan;
  }

  async function poolFor(skill: Skill): Promise<WarmPool | undefined> {
    const size = skill.sandbox?.warmPool ?? options.warmPoolSize ?? 0;
    const key = keyOf(skill);
    const current = pools.get(skill.id);
    if (current?.key === key) return current.pool;
    // A new version of the code: sandboxes started for the old one are stale.
    if (current !== undefined) void current.pool.close();
    pools.delete(skill.id);
    if (size === 0) return undefined;
    const plan = await planFor(skill);
    const pool = new WarmPool(
      size,
      async () => {
        const sandbox = await runner.start(plan.image, plan.command, plan.env, plan.config);
        return plan.mode === "handler" ? untilReady(sandbox) : sandbox;
      },
      (error) => options.onWarmPoolError?.(error, skill),
    );
    pools.set(skill.id, { key, pool });
    return pool;
  }

  async function execute(skill: Skill, input: unknown, context: SkillContext): Promise<unknown> {
    const plan = await planFor(skill);
    const pool = await poolFor(skill);
    const sandbox = pool?.take() ?? (await runner.start(plan.image, plan.command, plan.env, plan.config));
    const job =
      plan.mode === "command"
        ? JSON.stringify(input ?? null)
        : JSON.stringify({
            input,
            context: {
              executionId: context.executionId,
              attempt: context.attempt,
              apiKeyId: context.apiKeyId,
              sessionId: context.sessionId,
              skill: { name: skill.name, version: skill.version },
            },
          });
    const line = plan.mode === "handler" ? resultLine(sandbox) : undefined;
    sandbox.send(job, context.signal);
    sandbox.result.then(
      (result) => forwardLogs(result.stderr, context.logger),
      () => {},
    );
    if (line !== undefined) {
      // The answer is complete with its line; the engine's teardown goes on in the background.
      const answer = await line;
      if (answer !== undefined) {
        if (answer.ok) return answer.output;
        throw reviveError(answer.error ?? { message: "the sandbox runner reported no error" });
      }
    }
    const result = await sandbox.result;
    if (result.exitCode !== 0 || result.killed || plan.mode === "handler")
      throw failure(skill, result, plan.config);
    return parseCommandOutput(skill, result);
  }

  return {
    name: "container",
    run: (request) => execute(request.skill, request.input, request.context),
    async warmUp(skill) {
      await (await poolFor(skill))?.ready();
    },
    async close() {
      const open = [...pools.values()];
      pools.clear();
      plans.clear();
      await Promise.all(open.map(({ pool }) => pool.close()));
    },
  };
}
