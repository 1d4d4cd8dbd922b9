import { readdirSync, readFileSync } from "node:fs";
import { createBwrapProvider, SandboxRunner } from "@skillbox/sandbox";
import { bwrapRequirement, describeWithEngine } from "@skillbox/test-helpers/engine-availability";
import { expect, it, vi } from "vitest";
import { findOnPath } from "../lib/find-interpreter.ts";
import { runCodeBehaviours, useRunCodeHost } from "./run-code-behaviours.js";
import { outputOf } from "./run-code-host.js";

const CLEANUP_TIMEOUT = { timeout: 10_000, interval: 50 };
/** The PATH bwrap gives its sandboxes, over the host's own root. */
const BWRAP_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** Host processes running the skill's runner or a program it wrote (bwrap shares the host's /proc view). */
function runCodeProcesses(): string[] {
  const found: string[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ");
      if (commandLine.includes("/.skillbox/skill/index.ts") || /\/run-code-\w+\/main\./.test(commandLine)) {
        found.push(`${entry}: ${commandLine}`);
      }
    } catch {
      // The process ended while the list was read.
    }
  }
  return found;
}

describeWithEngine("run-code (bwrap)", bwrapRequirement(), () => {
  const runner = new SandboxRunner({ provider: createBwrapProvider() });
  const hostOfTest = useRunCodeHost(runner);

  runCodeBehaviours(hostOfTest, async () => {
    await vi.waitFor(() => {
      expect(runner.getRunningCount()).toBe(0);
      expect(runCodeProcesses()).toEqual([]);
    }, CLEANUP_TIMEOUT);
  });

  // bwrap shows the host's root read-only, so python runs when the host has python3.
  if (findOnPath("python3", BWRAP_PATH) !== undefined) {
    it("runs python with its stdin and arguments when python3 is on the PATH", async () => {
      const execution = await hostOfTest().executor.execute("run-code", {
        language: "python",
        code: 'import sys\nprint(sys.stdin.read().upper(), sys.argv[1:])\nsys.stderr.write("warned\\n")\nsys.exit(4)',
        stdin: "snake",
        args: ["a", "b"],
      });

      expect(outputOf(execution)).toMatchObject({
        stdout: "SNAKE ['a', 'b']\n",
        stderr: "warned\n",
        exitCode: 4,
        timedOut: false,
      });
    });
  } else {
    it("fails with LANGUAGE_UNAVAILABLE when the host has no python3", async () => {
      const execution = await hostOfTest().executor.execute("run-code", {
        language: "python",
        code: "print(1)",
      });

      expect(execution).toMatchObject({ status: "error", error: { code: "LANGUAGE_UNAVAILABLE" } });
    });
  }
});
