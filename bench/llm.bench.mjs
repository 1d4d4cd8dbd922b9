// Overhead of the @skillbox/llm tool-call path (extractToolCalls + executeToolCalls + toToolResults)
// on a model response with 8 parallel calls to a no-op inline skill, per wire format, against the
// same 8 executions run directly with executor.execute under Promise.all. Audit trail on in both.
import { join } from "node:path";
import { createSkillHost } from "@skillbox/core";
import { executeToolCalls, extractToolCalls, toolNameMap, toToolResults } from "@skillbox/llm";
import { printTable, registerNoopSkill, silentLogger, temporaryDirectory } from "./lib/fixtures.mjs";
import { compareRates, sequentialRate } from "./lib/measure.mjs";

const TURNS = Number(process.env.BENCH_TURNS ?? 1_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CALLS = 8;

/** A model response holding `CALLS` parallel calls to `toolName`, shaped like each provider's API. */
function responseWith(format, toolName) {
  const calls = Array.from({ length: CALLS }, (_, index) => ({
    id: `call_${index}`,
    input: { value: index },
  }));
  switch (format) {
    case "openai-chat":
      return {
        id: "chatcmpl-bench",
        object: "chat.completion",
        created: 0,
        model: "bench",
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: null,
              refusal: null,
              tool_calls: calls.map((call) => ({
                id: call.id,
                type: "function",
                function: { name: toolName, arguments: JSON.stringify(call.input) },
              })),
            },
            logprobs: null,
            finish_reason: "tool_calls",
          },
        ],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      };
    case "openai-responses":
      return {
        id: "resp_bench",
        object: "response",
        status: "completed",
        model: "bench",
        output: calls.map((call, index) => ({
          id: `fc_${index}`,
          type: "function_call",
          status: "completed",
          call_id: call.id,
          name: toolName,
          arguments: JSON.stringify(call.input),
        })),
      };
    case "anthropic":
      return {
        id: "msg_bench",
        type: "message",
        role: "assistant",
        model: "bench",
        content: calls.map((call) => ({ type: "tool_use", id: call.id, name: toolName, input: call.input })),
        stop_reason: "tool_use",
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      };
    case "gemini":
      return {
        candidates: [
          {
            content: {
              role: "model",
              parts: calls.map((call) => ({
                functionCall: { id: call.id, name: toolName, args: call.input },
              })),
            },
            finishReason: "STOP",
          },
        ],
      };
    default:
      throw new Error(`unknown format ${format}`);
  }
}

const FORMATS = ["openai-chat", "openai-responses", "anthropic", "gemini"];

const directory = temporaryDirectory("skillbox-bench-llm");
try {
  const host = createSkillHost({ database: join(directory.path, "skillbox.db"), logger: silentLogger() });
  registerNoopSkill(host, { description: "Returns its input" });
  const toolName = toolNameMap([{ name: "noop", version: "1.0.0" }]).toolName({ name: "noop" });
  const inputs = Array.from({ length: CALLS }, (_, index) => ({ value: index }));

  const direct = async () => {
    const executions = await Promise.all(inputs.map((input) => host.executor.execute("noop", input)));
    if (executions.some((execution) => execution.status !== "success")) throw new Error("direct call failed");
  };
  const viaLlm = (format) => {
    const response = responseWith(format, toolName);
    return async () => {
      const calls = extractToolCalls(response, format);
      const results = await executeToolCalls(calls, { executor: host.executor });
      if (results.length !== CALLS || results.some((result) => !result.ok)) {
        throw new Error(`${format}: ${JSON.stringify(results.find((result) => !result.ok))}`);
      }
      toToolResults(results, format);
    };
  };

  // Check each format end to end once and warm up JIT, Ajv and caches.
  const cases = { direct };
  for (const format of FORMATS) cases[format] = viaLlm(format);
  for (const run of Object.values(cases)) await sequentialRate(200, run);

  const rates = await compareRates(
    Object.fromEntries(Object.entries(cases).map(([name, run]) => [name, () => sequentialRate(TURNS, run)])),
    ROUNDS,
  );
  await host.close();

  const microseconds = (rate) => `${(1_000_000 / rate).toFixed(1)} µs`;
  console.log(
    `llm tool-call overhead (${CALLS} parallel calls to a no-op inline skill per turn, audit trail on)`,
  );
  printTable([
    ["case", "median per turn", "vs direct"],
    ["executor.execute x8 (Promise.all)", microseconds(rates.direct), "1.00x (baseline)"],
    ...FORMATS.map((format) => [
      `extract + execute + toToolResults, ${format}`,
      microseconds(rates[format]),
      `${(rates.direct / rates[format]).toFixed(2)}x`,
    ]),
  ]);
  console.log("  (executeToolCalls runs up to 8 calls at a time by default: the 8 calls go in one wave)");
  console.log(
    `  (time per turn; medians of ${ROUNDS} interleaved rounds of ${TURNS} turns; no target, info only)`,
  );
} finally {
  directory.cleanup();
}
