import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import type { SkillExecution } from "@skillbox/core";
import { createContainerRuntime, createPodmanProvider, SandboxRunner } from "@skillbox/sandbox";
import {
  describeWithEngine,
  podmanRequirement,
  removeLeftoverContainers,
  TEST_IMAGE,
} from "@skillbox/test-helpers/engine-availability";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { createTemporaryTree, type TemporaryTree } from "@skillbox/test-helpers/temporary-tree";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { type LoadedContainerSkills, loadContainerSkills } from "./fixtures/container-skills.js";
import { nodeCommand } from "./isolation-probes.js";

/** How often `text` contains `part`. */
function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

function messageOf(execution: SkillExecution): string {
  return execution.error?.message ?? "";
}

describeWithEngine("a missing container image (podman)", podmanRequirement(), () => {
  let host: TemporaryHost | undefined;
  let runner: SandboxRunner | undefined;
  let skills: LoadedContainerSkills | undefined;
  /** An image store of its own for podman, left empty: Skillbox's own images are missing there for real. */
  let emptyStore: TemporaryTree;

  beforeAll(() => {
    emptyStore = createTemporaryTree("skillbox-empty-image-store-");
    writeFileSync(
      emptyStore.path("storage.conf"),
      `[storage]\ndriver = "vfs"\ngraphroot = "${emptyStore.path("graph")}"\nrunroot = "${emptyStore.path("run")}"\n`,
    );
  });

  afterAll(() => {
    emptyStore.cleanup();
  });

  afterEach(async () => {
    await host?.dispose();
    skills?.cleanup();
    await runner?.killAll();
    host = undefined;
    skills = undefined;
    runner = undefined;
    removeLeftoverContainers();
  });

  function startHost(options: {
    emptyStore: boolean;
    defaultImage?: string;
    runArgs?: string[];
  }): TemporaryHost {
    runner = new SandboxRunner({
      provider: createPodmanProvider({
        ...(options.emptyStore
          ? { clientEnv: { CONTAINERS_STORAGE_CONF: emptyStore.path("storage.conf") } }
          : {}),
        ...(options.runArgs === undefined ? {} : { runArgs: options.runArgs }),
      }),
    });
    const runtime = createContainerRuntime({
      runner,
      ...(options.defaultImage === undefined ? {} : { defaultImage: options.defaultImage }),
    });
    host = createTemporaryHost({ runtimes: [runtime] });
    return host;
  }

  it("names the image, the sandbox.image that chose it and how to get it, and the skill once", async () => {
    const started = startHost({ emptyStore: false });
    const image = `localhost/skillbox-missing:${randomUUID()}`;
    started.registry.register({
      name: "boxed",
      version: "0.1.0",
      input: { type: "object" },
      handler: "unused-by-command-skills",
      runtime: "container",
      sandbox: { image, command: nodeCommand("console.log(1)") },
      retry: { maxAttempts: 3, initialDelayMs: 10 },
    });

    const execution = await started.executor.execute("boxed", {});

    expect(execution).toMatchObject({ status: "error", attempts: 1, error: { code: "SANDBOX_FAILED" } });
    const message = messageOf(execution);
    expect(message).toContain(`the image ${image}`);
    expect(message).toContain("sandbox.image");
    expect(message).toContain(`podman pull ${image}`);
    expect(message).not.toContain("build-test-image.sh");
    expect(occurrences(message, "boxed@0.1.0")).toBe(1);
  });

  it("says how to build the default image of handler skills when the engine has not got it", async () => {
    const started = startHost({ emptyStore: true });
    skills = await loadContainerSkills(started);

    const execution = await started.executor.execute("probe", { msg: "hi" });

    expect(execution).toMatchObject({ status: "error", error: { code: "SANDBOX_FAILED" } });
    const message = messageOf(execution);
    expect(message).toContain("the image localhost/skillbox-node:latest");
    expect(message).toContain("defaultImage");
    expect(message).toMatch(/build it with `bash \S*scripts\/build-test-image\.sh podman`/);
    expect(occurrences(message, "probe@1.0.0")).toBe(1);
  });

  it("says how to build the test image a skill names in sandbox.image", async () => {
    const started = startHost({ emptyStore: true });
    started.registry.register({
      name: "pinned-image",
      version: "1.0.0",
      input: { type: "object" },
      handler: "unused-by-command-skills",
      runtime: "container",
      sandbox: { image: TEST_IMAGE, command: nodeCommand("console.log(1)") },
    });

    const message = messageOf(await started.executor.execute("pinned-image", {}));

    expect(message).toContain(`the image ${TEST_IMAGE} (set by the skill's sandbox.image)`);
    expect(message).toMatch(/build-test-image\.sh podman`/);
  });

  it("keeps the engine's own words for other start failures", async () => {
    // A flag podman does not know: the engine fails (exit 125) with the image right there.
    const started = startHost({ emptyStore: false, runArgs: ["--no-such-flag"] });
    started.registry.register({
      name: "bad-flag",
      version: "1.0.0",
      input: { type: "object" },
      handler: "unused-by-command-skills",
      runtime: "container",
      sandbox: { image: TEST_IMAGE, command: nodeCommand("console.log(1)") },
    });

    const execution = await started.executor.execute("bad-flag", {});

    expect(execution.error?.code).toBe("SANDBOX_FAILED");
    const message = messageOf(execution);
    expect(message).toContain("the podman engine could not start the sandbox");
    expect(message).toContain("no-such-flag");
    expect(message).not.toContain("image store");
    expect(occurrences(message, "bad-flag@1.0.0")).toBe(1);
  });
});
