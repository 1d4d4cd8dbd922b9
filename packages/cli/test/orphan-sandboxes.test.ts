import { randomUUID } from "node:crypto";
import { currentSandboxOwner, formatSandboxOwner } from "@skillbox/sandbox/internal";
import { type CliProject, createCliProject } from "@skillbox/test-helpers/cli-process";
import {
  containersLabelled,
  deadPid,
  describeWithEngine,
  podmanRequirement,
  removeContainersLabelled,
  startLabelledContainer,
  TEST_IMAGE,
} from "@skillbox/test-helpers/engine-availability";
import { afterEach, beforeEach, expect, it } from "vitest";
import { skillFolder } from "./cli-fixtures.js";

const LISTENING = /listening\s+(http:\/\/[^\s]+) \(MCP at /;

let project: CliProject;
let testLabel: string;

beforeEach(() => {
  project = createCliProject();
  testLabel = `io.skillbox.test=${randomUUID()}`;
});

afterEach(async () => {
  await project.cleanup();
  removeContainersLabelled(testLabel);
});

describeWithEngine("skillbox serve (sandboxes left by a host that died)", podmanRequirement(), () => {
  it("removes a dead host's sandbox on start and keeps a live host's", { timeout: 90_000 }, async () => {
    const here = currentSandboxOwner();
    const orphan = startLabelledContainer(formatSandboxOwner({ ...here, pid: await deadPid() }), testLabel);
    const live = startLabelledContainer(formatSandboxOwner(here), testLabel);
    expect(containersLabelled(testLabel)).toEqual([orphan, live].sort());
    project.tree.writeFolder(
      "plugins/boxed",
      skillFolder(
        {
          name: "boxed",
          runtime: "container",
          input: { type: "object" },
          sandbox: { image: TEST_IMAGE, command: ["node", "-e", "process.stdin.pipe(process.stdout)"] },
        },
        "return input;",
      ),
    );

    const server = project.start(["serve", "--port", "0"], { env: { SKILLBOX_SANDBOX_RUNTIME: "podman" } });
    await server.waitForOutput(/removed 1 sandbox\(es\) left by a host that died/, 60_000);
    await server.waitForOutput(LISTENING, 60_000);

    expect(containersLabelled(testLabel)).toEqual([live]);
    await server.stop("SIGTERM");
  });
});
