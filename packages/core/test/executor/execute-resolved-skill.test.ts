import { defineInterceptor } from "@skillbox/core";
import { describe, expect, it } from "vitest";
import { registerSkill as register, rejection, useTemporaryHosts } from "./executor-test-bed.js";

const newHost = useTemporaryHosts();

describe("SkillExecutor.execute with a resolved Skill", () => {
  it("runs the very skill it is given, not what its name resolves to now", async () => {
    const host = newHost();
    const first = register(host, { name: "versioned", handler: "first" });
    register(host, { name: "versioned", version: "2.0.0", handler: "second" });
    host.executor.registerHandler("first", () => "from 1.0.0");
    host.executor.registerHandler("second", () => "from 2.0.0");
    const execution = await host.executor.execute(first, {});
    expect(execution.status).toBe("success");
    expect(execution.output).toBe("from 1.0.0");
    expect(execution.skillVersion).toBe("1.0.0");
    expect(execution.skillId).toBe(first.id);
    // The reference still resolves to the highest version.
    expect((await host.executor.execute("versioned", {})).output).toBe("from 2.0.0");
  });

  it("runs it through the interceptors and records it like a resolved reference", async () => {
    const host = newHost();
    const skill = register(host, { name: "echo", apiKeyId: "team-a" });
    host.executor.registerHandler("echo", (input) => input);
    const seen: string[] = [];
    host.executor.use(
      defineInterceptor({ name: "watch", before: (context) => void seen.push(context.apiKeyId) }),
    );
    const execution = await host.executor.execute(skill, { text: "hi" }, { apiKeyId: "team-a" });
    expect(execution.status).toBe("success");
    expect(seen).toEqual(["team-a"]);
    expect(await host.executor.getExecution(execution.id)).toMatchObject({
      skillName: "echo",
      apiKeyId: "team-a",
      status: "success",
      output: { text: "hi" },
    });
  });

  it("refuses a skill the caller cannot see with SKILL_NOT_FOUND, as resolution does", async () => {
    const host = newHost();
    const skill = register(host, { name: "private", apiKeyId: "team-a" });
    host.executor.registerHandler("private", () => "secret");
    const byReference = await rejection(
      host.executor.execute("private", {}, { apiKeyId: "team-b" }),
      "SKILL_NOT_FOUND",
    );
    const bySkill = await rejection(
      host.executor.execute(skill, {}, { apiKeyId: "team-b" }),
      "SKILL_NOT_FOUND",
    );
    expect(bySkill.message).toBe(byReference.message);
    // The default caller is `public`, which does not own it either.
    await rejection(host.executor.execute(skill, {}), "SKILL_NOT_FOUND");
    expect(await host.executor.countExecutions()).toBe(0);
  });

  it("lets any caller run a skill of the global owners", async () => {
    const host = newHost();
    const shared = register(host, { name: "shared", apiKeyId: "system" });
    host.executor.registerHandler("shared", () => "ok");
    expect((await host.executor.execute(shared, {}, { apiKeyId: "team-b" })).status).toBe("success");
  });

  it("refuses a disabled skill with SKILL_DISABLED, as resolution does", async () => {
    const host = newHost();
    const skill = register(host, { name: "switched-off" });
    host.executor.registerHandler("switched-off", () => "ran");
    const disabled = host.registry.setEnabledById(skill.id, false)!;
    expect(disabled.enabled).toBe(false);
    const bySkill = await rejection(host.executor.execute(disabled, {}), "SKILL_DISABLED");
    const byReference = await rejection(host.executor.execute("switched-off", {}), "SKILL_DISABLED");
    expect(bySkill.message).toBe(byReference.message);
    expect(bySkill.data).toEqual(byReference.data);
    expect(await host.executor.countExecutions()).toBe(0);
  });
});
