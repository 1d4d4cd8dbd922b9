// The quick start: the reference's echo example against the default instances, then the
// audit trail. Uses ./.skillbox/skillbox.db (or SKILLBOX_DB).
import { defineInterceptor, resolveDatabasePath, skillExecutor, skillRegistry } from "@skillbox/core";

await skillRegistry.register({
  name: "echo",
  version: "1.0.0",
  description: "Returns the same payload back",
  schema: {
    input: { type: "object", properties: { msg: { type: "string" } }, required: ["msg"] },
    output: { type: "object", properties: { echoed: { type: "string" } }, required: ["echoed"] },
  },
  handler: "echoHandler",
  enabled: true,
  apiKeyId: "public",
});

skillExecutor.registerHandler("echoHandler", async (input) => ({ echoed: input.msg }));

skillExecutor.use(
  defineInterceptor({
    name: "timing",
    after(context, result) {
      console.log(
        `[timing] ${context.skill.name}@${context.skill.version} took ${result.duration.toFixed(2)} ms`,
      );
    },
  }),
);

const result = await skillExecutor.execute(
  "echo@^1.0.0",
  { msg: "hello world" },
  { apiKeyId: "user-123", sessionId: "sess-abc" },
);
console.log("output:", result.output?.echoed);

const invalid = await skillExecutor.execute("echo", { msg: 42 }, { apiKeyId: "user-123" });
console.log(`invalid input → status ${invalid.status}, ${invalid.error?.code}: ${invalid.error?.message}`);

console.log(`\naudit trail in ${resolveDatabasePath()} (newest first):`);
console.table(
  (await skillExecutor.listExecutions({ owner: "user-123", limit: 2 })).map((row) => ({
    id: row.id.slice(0, 13),
    skill: `${row.skillName}@${row.skillVersion}`,
    status: row.status,
    error: row.error?.code ?? "",
    attempts: row.attempts,
    ms: row.duration?.toFixed(2),
  })),
);
console.log(
  `executions recorded for user-123 so far: ${await skillExecutor.countExecutions({ owner: "user-123" })}`,
);
