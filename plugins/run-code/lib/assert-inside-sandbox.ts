import { basename } from "node:path";
import { SkillboxError, type SkillContext } from "@skillbox/core";

/** The script `@skillbox/sandbox` starts in every handler sandbox (podman, docker, bwrap, …). */
const CONTAINER_RUNNER = "container-runner.mjs";

/**
 * Whether this handler runs inside a sandbox started by the container runtime: the process is
 * that runtime's runner, which is given `SKILLBOX_SKILL`, and the context holds none of the
 * registry's fields (the runner passes only the skill's name and version). In the host process
 * (the `inline` or `worker` runtime) neither holds.
 */
function isInsideSandbox(context: Pick<SkillContext, "skill">): boolean {
  const runner = basename(process.argv[1] ?? "");
  const fromRegistry = (context.skill as { runtime?: unknown } | undefined)?.runtime !== undefined;
  return runner === CONTAINER_RUNNER && process.env.SKILLBOX_SKILL !== undefined && !fromRegistry;
}

/**
 * Refuses to go on outside a sandbox, so a registration with `runtime: "inline"` (or `worker`)
 * can never run a caller's code on the host: `SANDBOX_UNAVAILABLE`, never retried.
 */
export function assertInsideSandbox(context: Pick<SkillContext, "skill">): void {
  if (isInsideSandbox(context)) return;
  const runtime = (context.skill as { runtime?: unknown } | undefined)?.runtime;
  throw new SkillboxError(
    "SANDBOX_UNAVAILABLE",
    `run-code runs code only inside a container sandbox, and its handler is running in the host process` +
      `${typeof runtime === "string" ? ` (runtime "${runtime}")` : ""}; register it with runtime "container" and ` +
      "give the host a container runtime (createContainerRuntime() from @skillbox/sandbox)",
    { data: { runtime: typeof runtime === "string" ? runtime : null } },
  );
}
