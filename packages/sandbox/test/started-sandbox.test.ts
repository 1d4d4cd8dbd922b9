import { describe, expect, it } from "vitest";
import { plainSandbox } from "./plain-sandbox.js";

describe("StartedSandbox.readLine", () => {
  it("keeps a character whose bytes arrive in two chunks whole", async () => {
    // `"é"` (é is 0xc3 0xa9), written in two parts a moment apart so the host reads two chunks.
    const script = [
      "process.stdout.write(Buffer.from([0x22, 0xc3]));",
      "setTimeout(() => process.stdout.write(Buffer.from([0xa9, 0x22, 0x0a])), 100);",
    ].join("\n");
    const sandbox = plainSandbox("split-character", script);
    const line = sandbox.readLine();
    sandbox.send();

    expect(await line).toBe('"é"');
    await sandbox.result;
  });
});
