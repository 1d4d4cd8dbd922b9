import { randomUUID } from "node:crypto";
import { type CliProject, createCliProject } from "@skillbox/test-helpers/cli-process";
import { hasPodman } from "@skillbox/test-helpers/engine-availability";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { skillFolder } from "./cli-fixtures.js";

let project: CliProject;

beforeEach(() => {
  project = createCliProject();
});

afterEach(async () => {
  await project.cleanup();
});

/** How often `text` contains `part`. */
function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

describe("skillbox run error messages", { timeout: 60_000 }, () => {
  it("names the skill once when the executor already did (a handler's plain error)", async () => {
    project.tree.writeFolder(
      "plugins/crash",
      skillFolder(
        { name: "crash", input: { type: "object" }, retry: { maxAttempts: 1 } },
        'throw new Error("kaput");',
      ),
    );
    const result = await project.run(["run", "crash", "--input", "{}"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error HANDLER_ERROR: crash@1\.0\.0: kaput$/m);
    expect(occurrences(result.stderr, "crash@1.0.0")).toBe(1);
  });

  // Needs podman only (the image is missing on purpose); CI always has it.
  it.runIf(hasPodman() || process.env.CI)(
    "names the skill once and says how to get a missing container image",
    async () => {
      const image = `localhost/skillbox-missing:${randomUUID()}`;
      project.tree.writeFolder(
        "plugins/boxed",
        skillFolder(
          {
            name: "boxed",
            version: "0.1.0",
            input: { type: "object" },
            runtime: "container",
            sandbox: { image, network: false },
          },
          "return {};",
        ),
      );
      const result = await project.run(["run", "boxed", "--input", "{}"]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^error SANDBOX_FAILED: boxed@0\.1\.0: the image /m);
      expect(occurrences(result.stderr, "boxed@0.1.0")).toBe(1);
      expect(result.stderr).toContain(`podman pull ${image}`);
      expect(result.stderr).toContain("sandbox.image");
    },
  );
});
