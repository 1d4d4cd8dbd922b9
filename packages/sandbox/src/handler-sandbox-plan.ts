import { realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { handlerModulePath, type Skill } from "@skillbox/core";
import type { SandboxMount } from "./sandbox-types.js";

/** The runner script, beside `src/` and `dist/` so both resolve it. */
const RUNNER_FILE = fileURLToPath(new URL("../runner/container-runner.mjs", import.meta.url));
const RUNNER_HOME = "/opt/skillbox";
const SKILL_MOUNT = "/skill";

function packageFolder(specifier: string, from: string): string {
  return realpathSync(dirname(createRequire(from).resolve(`${specifier}/package.json`)));
}

let runtimeMounts: SandboxMount[] | undefined;

/**
 * The host folders the runner needs inside an image: itself, the light entry of
 * `@skillbox/core` and its two dependencies (jiti to load TypeScript, zod for `defineSkill`).
 * Nothing else of the host is visible.
 */
function runnerMounts(): SandboxMount[] {
  if (runtimeMounts === undefined) {
    const core = packageFolder("@skillbox/core", RUNNER_FILE);
    const coreManifest = join(core, "package.json");
    runtimeMounts = [
      { source: dirname(RUNNER_FILE), target: `${RUNNER_HOME}/runner` },
      { source: core, target: `${RUNNER_HOME}/node_modules/@skillbox/core` },
      { source: packageFolder("jiti", coreManifest), target: `${RUNNER_HOME}/node_modules/jiti` },
      { source: packageFolder("zod", coreManifest), target: `${RUNNER_HOME}/node_modules/zod` },
    ];
  }
  return runtimeMounts;
}

/** How a handler skill with no command of its own runs in a sandbox. */
export interface HandlerSandboxPlan {
  command: string[];
  mounts: SandboxMount[];
}

/**
 * Runs the skill's own TypeScript/JavaScript handler through Skillbox's runner: in an image,
 * the skill's folder is mounted read-only at `/skill` beside the runner; under a provider
 * without images (bwrap), the host's paths are used as they are.
 */
export function planHandlerSandbox(skill: Skill, usesImages: boolean): HandlerSandboxPlan {
  const modulePath = realpathSync(handlerModulePath(skill, "a container sandbox"));
  const declaredRoot = (skill.metadata as { root?: unknown } | undefined)?.root;
  const root = typeof declaredRoot === "string" ? realpathSync(declaredRoot) : dirname(modulePath);
  if (!usesImages) {
    // The host's root is visible read-only, but /tmp is a fresh tmpfs: bind the skill's folder
    // again in case it lives there.
    return { command: [process.execPath, RUNNER_FILE, modulePath], mounts: [{ source: root, target: root }] };
  }
  const inside = relative(root, modulePath).split(sep).join("/");
  return {
    command: ["node", `${RUNNER_HOME}/runner/container-runner.mjs`, `${SKILL_MOUNT}/${inside}`],
    mounts: [...runnerMounts(), { source: root, target: SKILL_MOUNT }],
  };
}
