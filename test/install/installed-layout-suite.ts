import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  describeWithEngine,
  listSkillboxContainers,
  podmanRequirement,
} from "@skillbox/test-helpers/engine-availability";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeResult, type ProcessResult } from "./child-processes.js";
import { expectSuccess, printedJson } from "./cli-expectations.js";
import { describeDistributedSteps } from "./distributed-steps.js";
import { describeInstalledPackageSteps } from "./installed-package-steps.js";
import { type InstalledProject, type InstallLayout, installProject } from "./installed-project.js";
import { PUBLIC_PACKAGES, packPublicPackages } from "./pack-public-packages.js";
import { describeScaffoldSteps, nextSkillboxCommands } from "./scaffold-steps.js";
import {
  containerFixture,
  coreImportFixture,
  interceptorFixture,
  undeclaredZodFixture,
  workerFixture,
} from "./skill-fixtures.js";
import { describeStudioSteps } from "./studio-steps.js";

/**
 * A safety net: npm takes 20–40 s with the local prebuilds, 1–3 min when it compiles
 * better-sqlite3; pnpm takes seconds (its store keeps the build).
 */
const INSTALL_TIMEOUT_MS = 240_000;
const COMMAND_TIMEOUT_MS = 60_000;
/** A container start is 0.3–1 s here, a cold one more; each example starts one. */
const CONTAINER_TIMEOUT_MS = 120_000;

/** The message for a handler's undeclared import names the package, the skill's package.json and the fix. */
function expectFixForMissingZod(result: ProcessResult): void {
  const printed = result.stdout + result.stderr;
  expect(printed, describeResult(result)).toMatch(/add `?zod`? to `?\S*zod-greet\/package\.json/);
  expect(printed, describeResult(result)).toMatch(/install/);
}

/**
 * The out-of-workspace test: packs the public packages, installs the tarballs into a fresh
 * project under the OS temp folder with `layout`, and works there as a new user would, with
 * the installed `node_modules/.bin/skillbox` only.
 */
export function describeInstalledLayout(layout: InstallLayout): void {
  describe(`the packed packages, installed with ${layout} in a project outside the workspace`, {
    timeout: COMMAND_TIMEOUT_MS,
  }, () => {
    let temporaryRoot: string | undefined;
    let project: InstalledProject;

    beforeAll(async () => {
      temporaryRoot = realpathSync(mkdtempSync(join(tmpdir(), `skillbox-install-${layout}-`)));
      const packStarted = performance.now();
      const tarballs = await packPublicPackages(join(temporaryRoot, "tarballs"));
      const packMs = performance.now() - packStarted;
      const root = join(temporaryRoot, "project");
      mkdirSync(root);
      project = await installProject({
        layout,
        tarballs,
        root,
        prebuildsFolder: join(temporaryRoot, "prebuilds"),
      });
      console.info(
        `[out-of-workspace ${layout}] pnpm pack x${PUBLIC_PACKAGES.length}: ${(packMs / 1000).toFixed(1)} s; ` +
          `${layout} install: ${(project.installDurationMs / 1000).toFixed(1)} s`,
      );
    }, INSTALL_TIMEOUT_MS);

    afterAll(async () => {
      await project?.processes.stopAll();
      if (temporaryRoot !== undefined) rmSync(temporaryRoot, { recursive: true, force: true });
    });

    describeInstalledPackageSteps(() => project);
    describeScaffoldSteps(() => project);
    describeStudioSteps(() => project);
    describeDistributedSteps(() => project);

    it(
      "an interceptor plugin folder (interceptor.json + handler, with options) rewrites a run's output",
      async () => {
        project.write(interceptorFixture("interceptor-demo/plugins"));
        const result = await project.cli(["run", "greet", "--input", '{"name":"Ada"}'], {
          cwd: "interceptor-demo",
        });
        expectSuccess(result);
        expect(printedJson(result)).toEqual({ message: "HELLO, ADA! (shouted)" });
      },
      COMMAND_TIMEOUT_MS,
    );

    it(
      'a skill with runtime "worker" runs off the main thread',
      async () => {
        project.write(workerFixture("worker-demo/plugins"));
        const result = await project.cli(["run", "thread-probe", "--input", "{}"], { cwd: "worker-demo" });
        expectSuccess(result);
        const output = printedJson(result) as { isMainThread: boolean; threadId: number };
        expect(output.isMainThread).toBe(false);
        expect(output.threadId).toBeGreaterThan(0);
      },
      COMMAND_TIMEOUT_MS,
    );

    it(
      "a handler importing @skillbox/core and @skillbox/core/handler loads and runs",
      async () => {
        project.write(coreImportFixture("core-demo/plugins"));
        const result = await project.cli(["run", "core-probe", "--input", '{"name":"Ada"}'], {
          cwd: "core-demo",
        });
        expectSuccess(result);
        expect(printedJson(result)).toEqual({ message: "core says hello to Ada", errorCode: "USAGE" });
      },
      COMMAND_TIMEOUT_MS,
    );

    it(
      "a handler importing zod its package.json does not declare fails with the fix, and runs once the folder installs it",
      async () => {
        project.write(undeclaredZodFixture("zod-demo/plugins"));
        const skillFolder = "zod-demo/plugins/zod-greet";
        const arguments_ = ["run", "zod-greet", "--input", '{"name":"Ada"}'];
        const missing = await project.cli(arguments_, { cwd: "zod-demo" });
        expect(missing.code, describeResult(missing)).toBe(1);
        expectFixForMissingZod(missing);
        // validate is where a user checks a package before running it: it names the same fix.
        const invalid = await project.cli(["validate", "plugins"], { cwd: "zod-demo" });
        expect(invalid.code, describeResult(invalid)).toBe(1);
        expectFixForMissingZod(invalid);

        // The fix the message gives: the skill's folder declares and installs zod itself.
        const install =
          layout === "npm"
            ? await project.exec("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "zod"], {
                cwd: skillFolder,
                timeoutMs: COMMAND_TIMEOUT_MS,
              })
            : await project.exec("pnpm", ["add", "--prefer-offline", "zod"], {
                cwd: skillFolder,
                timeoutMs: COMMAND_TIMEOUT_MS,
              });
        expectSuccess(install);
        const declared = JSON.parse(readFileSync(project.path(skillFolder, "package.json"), "utf8")) as {
          dependencies?: Record<string, string>;
        };
        expect(declared.dependencies?.zod, describeResult(install)).toBeDefined();

        const valid = await project.cli(["validate", "plugins"], { cwd: "zod-demo" });
        expectSuccess(valid);
        const fixed = await project.cli(arguments_, { cwd: "zod-demo" });
        expectSuccess(fixed);
        expect(printedJson(fixed)).toEqual({ message: "zod checked Ada" });
      },
      COMMAND_TIMEOUT_MS * 2,
    );

    describeWithEngine("container skills (podman)", podmanRequirement(), () => {
      it(
        "skillbox new --runtime container, then its suggested skillbox test, passes in a sandbox",
        async () => {
          const created = await project.cli(["new", "boxed", "--runtime", "container", "--dir", "boxes"]);
          expectSuccess(created);
          const test = nextSkillboxCommands(created).find((words) => words[0] === "test");
          expect(test, describeResult(created)).toBeDefined();
          const result = await project.cli(test!, { timeoutMs: CONTAINER_TIMEOUT_MS });
          expectSuccess(result);
          expect(result.stdout).toContain("boxed@0.1.0");
          expect(result.stdout).toContain("2 passed, 0 failed");
          expect(listSkillboxContainers(result.pid), "containers the CLI left").toEqual([]);
        },
        CONTAINER_TIMEOUT_MS,
      );

      it(
        'a TypeScript handler with runtime "container" runs as the sandbox\'s unprivileged user',
        async () => {
          project.write(containerFixture("container-demo/plugins"));
          const result = await project.cli(["run", "user-probe", "--input", "{}"], {
            cwd: "container-demo",
            timeoutMs: CONTAINER_TIMEOUT_MS,
          });
          expectSuccess(result);
          expect(printedJson(result)).toEqual({ uid: 65534 });
          expect(listSkillboxContainers(result.pid), "containers the CLI left").toEqual([]);
        },
        CONTAINER_TIMEOUT_MS,
      );
    });
  });
}
