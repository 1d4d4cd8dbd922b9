import { executeToolCalls, extractToolCalls } from "@skillbox/llm";
import { installRecordingTelemetry, type RecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { echoSkill } from "./fixtures/echo-skill.js";

let telemetry: RecordingTelemetry;
let host: TemporaryHost;

beforeAll(() => {
  telemetry = installRecordingTelemetry();
});
afterAll(async () => {
  await telemetry.close();
});
beforeEach(() => {
  telemetry.reset();
  host = createTemporaryHost();
  host.executor.registerHandler("echo", (input: { msg: string }) => ({ echoed: input.msg }));
  host.registry.register(echoSkill({ name: "echo" }));
});
afterEach(async () => {
  await host.dispose();
});

describe("executeToolCalls with an OpenTelemetry SDK", () => {
  it("records the model's tool call id as the execution span's gen_ai.tool.call.id", async () => {
    const calls = extractToolCalls(
      {
        choices: [
          {
            message: {
              tool_calls: [
                {
                  id: "call_abc123",
                  type: "function",
                  function: { name: "echo", arguments: '{"msg":"hi"}' },
                },
              ],
            },
          },
        ],
      },
      "openai-chat",
    );

    const [result] = await executeToolCalls(calls, { executor: host.executor });

    expect(result).toMatchObject({ handled: true, ok: true });
    const [span] = telemetry.named("execute_tool echo");
    expect(span?.attributes["gen_ai.tool.call.id"]).toBe("call_abc123");
    expect(span?.attributes["skillbox.execution.id"]).toBe(result?.executionId);
  });

  it("records the execution id for a Gemini call, whose id was made up", async () => {
    const calls = extractToolCalls(
      { candidates: [{ content: { parts: [{ functionCall: { name: "echo", args: { msg: "hi" } } }] } }] },
      "gemini",
    );
    expect(calls[0]?.id).toBe("echo-0");

    const [result] = await executeToolCalls(calls, { executor: host.executor });

    const [span] = telemetry.named("execute_tool echo");
    expect(span?.attributes["gen_ai.tool.call.id"]).toBe(result?.executionId);
  });
});
