import { type LoadSkillsResult, loadSkills } from "@skillbox/loader";
import {
  type ContainerRuntime,
  createContainerRuntime,
  createPodmanProvider,
  SandboxRunner,
} from "@skillbox/sandbox";
import {
  describeWithEngine,
  podmanRequirement,
  removeLeftoverContainers,
  TEST_IMAGE,
} from "@skillbox/test-helpers/engine-availability";
import { CORE_IMPORTING_HANDLER, peerPackageJson } from "@skillbox/test-helpers/host-provided-skill";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterEach, beforeEach, expect, it } from "vitest";

// A container skill in a folder under the OS temp dir, outside the workspace: the sandbox shows
// the handler its own folder only, and the runner provides `@skillbox/core` (both entries).

const MANIFEST = {
  name: "boxed",
  version: "1.0.0",
  runtime: "container",
  input: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  handler: "./index.ts",
};

const PACKAGE_JSON = peerPackageJson("boxed-skill");

describeWithEngine(
  "container sandboxes give handlers the host's @skillbox/core (podman)",
  podmanRequirement(),
  () => {
    const runner = new SandboxRunner({ provider: createPodmanProvider() });
    let runtime: ContainerRuntime;
    let host: TemporaryHost;
    let tree: TemporaryTree;
    let loaded: LoadSkillsResult | undefined;

    beforeEach(() => {
      runtime = createContainerRuntime({ runner, defaultImage: TEST_IMAGE });
      host = createTemporaryHost({ runtimes: [runtime] });
      tree = createTemporaryTree("skillbox-container-imports-");
    });

    afterEach(async () => {
      loaded?.loader.close();
      loaded = undefined;
      await host.dispose();
      tree.cleanup();
      await runner.killAll();
      removeLeftoverContainers();
    });

    async function runBoxed(files: Record<string, unknown>) {
      tree.writeFolder("skills/boxed", { "skill.json": MANIFEST, ...(files as Record<string, string>) });
      loaded = await loadSkills({
        dirs: [tree.path("skills")],
        npm: false,
        registry: host.registry,
        executor: host.executor,
      });
      expect(loaded.failed).toEqual([]);
      return host.executor.execute("boxed", { name: "ada" });
    }

    it("runs a handler importing @skillbox/core and @skillbox/core/handler", async () => {
      const execution = await runBoxed({
        "package.json": PACKAGE_JSON as never,
        "index.ts": CORE_IMPORTING_HANDLER,
      });
      expect(execution).toMatchObject({ status: "success", output: { greeting: "hello ada", denies: true } });
    });

    it("resolves other packages from the skill's own node_modules", async () => {
      const execution = await runBoxed({
        "package.json": { ...PACKAGE_JSON, dependencies: { "fake-dep": "1.0.0" } } as never,
        "node_modules/fake-dep/package.json": {
          name: "fake-dep",
          version: "1.0.0",
          main: "index.js",
        } as never,
        "node_modules/fake-dep/index.js": "exports.shout = (text) => text.toUpperCase();\n",
        "index.ts":
          'import { shout } from "fake-dep";\nexport default (input: { name: string }) => ({ shouted: shout(input.name) });\n',
      });
      expect(execution).toMatchObject({ status: "success", output: { shouted: "ADA" } });
    });

    it("fails an undeclared import with HANDLER_INVALID naming the host's files and the fix", async () => {
      const execution = await runBoxed({
        "package.json": PACKAGE_JSON as never,
        "index.ts": 'import { z } from "zod";\nexport default () => ({ z: typeof z });\n',
      });
      expect(execution.status).toBe("error");
      expect(execution.error?.code).toBe("HANDLER_INVALID");
      expect(execution.error?.message).toContain(
        `${tree.path("skills/boxed/index.ts")} imports 'zod', which is not installed for ${tree.path("skills/boxed")}: add \`zod\` to ${tree.path("skills/boxed/package.json")} dependencies and install it`,
      );
    });

    it("says to create a package.json when the skill has none", async () => {
      const execution = await runBoxed({
        "index.ts": 'import { z } from "zod/v4";\nexport default () => ({ z: typeof z });\n',
      });
      expect(execution.error?.message).toContain(
        `${tree.path("skills/boxed/index.ts")} imports 'zod/v4', which is not installed for ${tree.path("skills/boxed")}: create ${tree.path("skills/boxed/package.json")} with \`zod\` in its dependencies, and install them`,
      );
    });
  },
);
