import { existsSync, readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Skill } from "@skillbox/core";
import { handlerModulePath } from "@skillbox/core/internal";
import type { SandboxMount } from "./sandbox-types.js";

/** The runner script, beside `src/` and `dist/` so both resolve it. */
const RUNNER_FILE = fileURLToPath(new URL("../runner/container-runner.mjs", import.meta.url));
/** Where the runner and the skill are mounted: in an image, or on the host's root under bwrap. */
interface SandboxLayout {
  home: string;
  skill: string;
  node: string;
}

const IMAGE_LAYOUT: SandboxLayout = { home: "/opt/skillbox", skill: "/skill", node: "node" };
/**
 * bwrap shows the host's root read-only, where no new mount point can be made, and a fresh
 * tmpfs at /tmp, where it can: a checkout under /tmp would otherwise vanish.
 */
const HOST_ROOT_LAYOUT: SandboxLayout = {
  home: "/tmp/.skillbox",
  skill: "/tmp/.skillbox/skill",
  node: process.execPath,
};

function packageFolder(specifier: string, from: string): string {
  const require = createRequire(from);
  try {
    return realpathSync(dirname(require.resolve(`${specifier}/package.json`)));
  } catch {
    // A package whose exports hide its package.json (`@opentelemetry/api`): the folder above its
    // entry that holds its manifest.
    for (
      let folder = dirname(require.resolve(specifier));
      dirname(folder) !== folder;
      folder = dirname(folder)
    ) {
      const manifest = join(folder, "package.json");
      if (existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).name === specifier) {
        return realpathSync(folder);
      }
    }
    throw new Error(`${specifier} is installed without a package.json above its entry`);
  }
}

let runnerSources:
  | { runner: string; core: string; jiti: string; zod: string; ipaddr: string; openTelemetry: string }
  | undefined;

/**
 * The host folders the runner needs inside an image: itself, the light entry of
 * `@skillbox/core` and its four dependencies (jiti to load TypeScript, zod for `defineSkill`,
 * ipaddr.js for the address checks it exports, `@opentelemetry/api` for the span relay, which
 * handlers get too). Nothing else of the host is visible. They sit
 * under the runner's folder, not the skill's: a handler gets `@skillbox/core` through the
 * runner's alias (the host provides it), and resolves anything else — zod included — from its
 * own folder's `node_modules` only.
 */
function runnerMounts(home: string): SandboxMount[] {
  if (runnerSources === undefined) {
    const core = packageFolder("@skillbox/core", RUNNER_FILE);
    const coreManifest = join(core, "package.json");
    runnerSources = {
      runner: dirname(RUNNER_FILE),
      core,
      jiti: packageFolder("jiti", coreManifest),
      zod: packageFolder("zod", coreManifest),
      ipaddr: packageFolder("ipaddr.js", coreManifest),
      openTelemetry: packageFolder("@opentelemetry/api", coreManifest),
    };
  }
  return [
    { source: runnerSources.runner, target: `${home}/runner` },
    { source: runnerSources.core, target: `${home}/node_modules/@skillbox/core` },
    { source: runnerSources.jiti, target: `${home}/node_modules/jiti` },
    { source: runnerSources.zod, target: `${home}/node_modules/zod` },
    { source: runnerSources.ipaddr, target: `${home}/node_modules/ipaddr.js` },
    { source: runnerSources.openTelemetry, target: `${home}/node_modules/@opentelemetry/api` },
  ];
}

/** How a handler skill with no command of its own runs in a sandbox. */
export interface HandlerSandboxPlan {
  command: string[];
  mounts: SandboxMount[];
  /**
   * Where the skill's folder is mounted and where it is on the host: the runner names the host's
   * files when the handler fails to load (a package it imports that is not installed, say).
   */
  env: { SKILLBOX_SKILL_MOUNT: string; SKILLBOX_SKILL_SOURCE: string };
}

/**
 * Runs the skill's own TypeScript/JavaScript handler through Skillbox's runner: the skill's
 * folder is mounted read-only beside the runner and the packages it needs, in an image
 * at `/skill`, under bwrap (no image) in the sandbox's own /tmp.
 */
export function planHandlerSandbox(skill: Skill, usesImages: boolean): HandlerSandboxPlan {
  const layout = usesImages ? IMAGE_LAYOUT : HOST_ROOT_LAYOUT;
  const modulePath = realpathSync(handlerModulePath(skill, "a container sandbox"));
  // A bundle member's code (and its snapshot) lives in the bundle, beside the member's folder.
  const root = skill.code === undefined ? dirname(modulePath) : realpathSync(skill.code.root);
  const inside = relative(root, modulePath).split(sep).join("/");
  return {
    command: [layout.node, `${layout.home}/runner/container-runner.mjs`, `${layout.skill}/${inside}`],
    mounts: [...runnerMounts(layout.home), { source: root, target: layout.skill }],
    env: { SKILLBOX_SKILL_MOUNT: layout.skill, SKILLBOX_SKILL_SOURCE: root },
  };
}
