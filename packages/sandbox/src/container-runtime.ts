import { trace } from "@opentelemetry/api";
import {
  type RuntimeDescription,
  type Skill,
  SkillboxError,
  type SkillContext,
  type SkillRuntime,
} from "@skillbox/core";
import { traceHeaders } from "@skillbox/core/handler-module";
import { endRelayBoundary, isTracing, startRelayBoundary } from "@skillbox/core/internal";
import { sandboxRunner } from "./default-sandbox-runner.js";
import { planHandlerSandbox } from "./handler-sandbox-plan.js";
import { resolveSandboxConfig } from "./resolve-sandbox-config.js";
import { type JobPlan, label, runSandboxJob, untilReady } from "./sandbox-job.js";
import type { SandboxRunner } from "./sandbox-runner.js";
import type { SandboxConfig, SandboxProvider } from "./sandbox-types.js";
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
  /**
   * Removes the sandboxes of hosts that died without cleaning up (see
   * `SandboxRunner.removeOrphans`); hosts call it on start. Resolves with the ids removed.
   */
  removeOrphans(): Promise<string[]>;
  /**
   * The engine (once the runner's provider is resolved; null before), its version (asked of the
   * engine once, in the background, on the first call: null until it answered), the default
   * image, network and limits of a sandbox, and the warm pool of each skill version (`busy`:
   * sandboxes still starting). Spawns nothing per call; names no host path and no secret.
   */
  describe(): RuntimeDescription;
}

/** The W3C headers of the active span as environment variables (`TRACEPARENT`, `TRACESTATE`). */
function commandTraceEnv(): Record<string, string> {
  const headers = traceHeaders();
  const env: Record<string, string> = {};
  if (headers.traceparent !== undefined) env.TRACEPARENT = headers.traceparent;
  if (headers.tracestate !== undefined) env.TRACESTATE = headers.tracestate;
  return env;
}

/** The default image of handler skills: the one `scripts/build-test-image.sh` builds. */
export const DEFAULT_SANDBOX_IMAGE = "localhost/skillbox-node:latest";

/** The hardened limits a sandbox gets when its skill sets none, as `describe()` shows them. */
const SANDBOX_DEFAULTS = resolveSandboxConfig({});

/** How long a warm sandbox may take to load its handler before it is given up. */
const WARM_START_TIMEOUT_MS = 60_000;

/**
 * The `container` runtime: each execution of a skill with `runtime: "container"` runs in a
 * fresh sandbox. With `sandbox.command`, the input JSON goes to the command's stdin and its
 * stdout is the output JSON; without one, Skillbox's runner loads the skill's own handler
 * inside the sandbox (no Dockerfile needed). Timeouts and cancellation kill the sandbox.
 */
export function createContainerRuntime(options: ContainerRuntimeOptions = {}): ContainerRuntime {
  const runner = options.runner ?? sandboxRunner;
  const plans = new Map<string, Promise<JobPlan>>();
  const pools = new Map<string, { key: string; pool: WarmPool; skill: Skill }>();
  /** The engine's version, asked once per provider (the runner's is resolved lazily). */
  let engine: { provider: SandboxProvider; version: string | undefined } | undefined;
  /** Every sandbox this runtime started that has not ended (warm ones included). */
  const live = new Set<StartedSandbox>();

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
      env: { ...env, ...handler.env },
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
    // Another caller may have made the pool while this one waited for the plan: one pool a skill,
    // or the other's warm sandboxes would never be taken nor closed (and the gauge count them).
    const made = pools.get(skill.id);
    if (made?.key === key) return made.pool;
    if (made !== undefined) void made.pool.close();
    const pool = new WarmPool(
      size,
      async () => {
        const sandbox = await startSandbox(plan);
        return plan.mode === "handler" ? untilReady(sandbox, WARM_START_TIMEOUT_MS) : sandbox;
      },
      (error) => options.onWarmPoolError?.(error, skill),
      skill,
    );
    pools.set(skill.id, { key, pool, skill });
    return pool;
  }

  /**
   * Starts a sandbox for `plan` and tracks it until it ended, so `close()` can stop it. `env` adds
   * to the plan's (a traced command's `TRACEPARENT`).
   */
  async function startSandbox(plan: JobPlan, env?: Record<string, string>): Promise<StartedSandbox> {
    const sandbox = await runner.start(
      plan.image,
      plan.command,
      env === undefined ? plan.env : { ...plan.env, ...env },
      plan.config,
    );
    live.add(sandbox);
    const forget = () => live.delete(sandbox);
    sandbox.result.then(forget, forget);
    return sandbox;
  }

  /**
   * A traced attempt: a `sandbox start` span (provider, image, warm or cold) and a `sandbox run`
   * span, under which the handler's spans are replayed; a command started cold gets the
   * attempt's `TRACEPARENT`/`TRACESTATE` in its environment (the OpenTelemetry env carrier).
   */
  async function executeTraced(
    skill: Skill,
    plan: JobPlan,
    warm: StartedSandbox | undefined,
    input: unknown,
    context: SkillContext,
  ): Promise<unknown> {
    const tracer = trace.getTracer("@skillbox/sandbox");
    const provider = await runner.getProvider();
    const attributes = {
      "skillbox.runtime": "container",
      "gen_ai.tool.name": skill.name,
      "skillbox.sandbox.provider": provider.name,
      "skillbox.sandbox.image": plan.image,
      "skillbox.sandbox.mode": plan.mode,
    };
    const start = tracer.startSpan("sandbox start", {
      attributes: { ...attributes, "skillbox.sandbox.warm": warm !== undefined },
    });
    let sandbox = warm;
    try {
      sandbox ??= await startSandbox(plan, plan.mode === "command" ? commandTraceEnv() : undefined);
      endRelayBoundary({ span: start });
    } catch (error) {
      endRelayBoundary({ span: start }, error);
      throw error;
    }
    const boundary = startRelayBoundary(tracer, "sandbox run", attributes);
    try {
      const output = await runSandboxJob(skill, plan, sandbox, input, context, boundary);
      if (boundary !== undefined) endRelayBoundary(boundary);
      return output;
    } catch (error) {
      if (boundary !== undefined) endRelayBoundary(boundary, error);
      throw error;
    }
  }

  /** What `describe()` says of the engine's version: the answer of one lookup per provider, started on first ask. */
  function engineVersionOf(provider: SandboxProvider): string | undefined {
    if (engine?.provider !== provider) {
      const asked: { provider: SandboxProvider; version: string | undefined } = {
        provider,
        version: undefined,
      };
      engine = asked;
      // A failed lookup leaves it unknown: asking again on every describe() would spawn each time.
      provider.engineVersion?.().then(
        (version) => {
          asked.version = version;
        },
        () => {},
      );
    }
    return engine.version;
  }

  async function execute(skill: Skill, input: unknown, context: SkillContext): Promise<unknown> {
    const plan = await planFor(skill);
    const pool = await poolFor(skill);
    try {
      const warm = pool?.take();
      if (isTracing()) {
        return await executeTraced(skill, plan, warm, input, context);
      }
      return await runSandboxJob(skill, plan, warm ?? (await startSandbox(plan)), input, context);
    } finally {
      // Refilled after the job is answered and the execution has been recorded and returned:
      // starting a sandbox forks the engine's client, which blocks this thread for milliseconds,
      // and its start-up takes hundreds of ms of engine CPU.
      if (pool !== undefined) setTimeout(() => pool.fill(), 0);
    }
  }

  return {
    name: "container",
    run: (request) => execute(request.skill, request.input, request.context),
    async warmUp(skill) {
      await (await poolFor(skill))?.ready();
    },
    removeOrphans: () => runner.removeOrphans(),
    describe() {
      const provider = runner.resolvedProvider;
      return {
        details: {
          isolation: "sandbox",
          engine: provider?.name ?? null,
          engineVersion: provider === undefined ? null : (engineVersionOf(provider) ?? null),
          // bwrap runs on the host's own root: no image.
          image: provider?.usesImages === false ? null : (options.defaultImage ?? DEFAULT_SANDBOX_IMAGE),
          // A skill's `sandbox.network: true` is the only way out of the private loopback.
          network: "none",
          memoryMb: null,
          cpus: null,
          pidsLimit: SANDBOX_DEFAULTS.pidsLimit,
          readOnlyRoot: SANDBOX_DEFAULTS.readOnly,
          user: SANDBOX_DEFAULTS.user,
          tmpfsSizeMb: SANDBOX_DEFAULTS.tmpfsSizeMb,
          maxOutputBytes: SANDBOX_DEFAULTS.maxOutputBytes,
          warmPoolSize: options.warmPoolSize ?? 0,
          sandboxes: live.size,
        },
        pools: [...pools.values()].map(({ pool, skill }) => {
          const state = pool.state();
          return {
            name: label(skill),
            skillId: skill.id,
            size: state.ready + state.starting,
            idle: state.ready,
            busy: state.starting,
            max: state.size,
          };
        }),
      };
    },
    async close() {
      const open = [...pools.values()];
      pools.clear();
      plans.clear();
      await Promise.all(open.map(({ pool }) => pool.close()));
      // Warm sandboxes still starting, and sandboxes of timed-out or cancelled executions
      // whose removal is still under way.
      const left = [...live];
      await Promise.all(left.map((sandbox) => sandbox.kill()));
      await Promise.all(left.map((sandbox) => sandbox.result.catch(() => {})));
    },
  };
}
