import { createTemporaryHost, type TemporaryHost } from "@skillbox/test-helpers/temporary-host";
import { afterEach, describe, expect, it } from "vitest";
import createPolicyInterceptor, { createPolicy, type PolicyOptions } from "../index.ts";

const SKILLS = ["echo", "github.issues", "github.pulls", "run-code", "@acme/weather"];

const hosts: TemporaryHost[] = [];

afterEach(async () => {
  for (const host of hosts.splice(0)) await host.dispose();
});

/** A host with the policy installed and every skill in {@link SKILLS} registered as a global skill. */
function hostWithPolicy(options: PolicyOptions): TemporaryHost {
  const host = createTemporaryHost();
  hosts.push(host);
  host.executor.use(createPolicyInterceptor(options));
  for (const name of SKILLS) {
    host.registry.register({ name, version: "1.0.0", handler: "ok", apiKeyId: "system" });
  }
  host.executor.registerHandler("ok", () => ({ ok: true }));
  return host;
}

/** Runs `skill` as `owner` and returns the recorded status (and error, when denied). */
async function run(host: TemporaryHost, owner: string, skill: string) {
  const execution = await host.executor.execute(skill, {}, { apiKeyId: owner });
  return { status: execution.status, error: execution.error };
}

describe("policy plugin", () => {
  it("allows and denies by owner glob and skill glob", async () => {
    const host = hostWithPolicy({
      default: "deny",
      rules: [{ owners: ["user-*"], allow: ["echo", "github.*"], deny: ["run-code"] }],
    });

    expect((await run(host, "user-42", "echo")).status).toBe("success");
    expect((await run(host, "user-42", "github.issues")).status).toBe("success");
    const denied = await run(host, "user-42", "run-code");
    expect(denied.status).toBe("denied");
    expect(denied.error).toMatchObject({
      code: "DENIED",
      message: 'policy: owner "user-42" may not run "run-code" (rule 1)',
      data: { owner: "user-42", skill: "run-code", rule: 1 },
    });
  });

  it("falls back to the default when no rule matches", async () => {
    const denyByDefault = hostWithPolicy({ default: "deny", rules: [{ owners: "user-*", allow: "echo" }] });
    const byOwner = await run(denyByDefault, "admin", "echo");
    expect(byOwner.status).toBe("denied");
    expect(byOwner.error?.message).toBe('policy: owner "admin" may not run "echo" (default: deny)');
    // The owner matches but no pattern names the skill: the rule does not decide.
    expect((await run(denyByDefault, "user-1", "github.pulls")).status).toBe("denied");

    const allowByDefault = hostWithPolicy({
      default: "allow",
      rules: [{ owners: "user-*", deny: "run-code" }],
    });
    expect((await run(allowByDefault, "admin", "run-code")).status).toBe("success");
  });

  it("lets the first matching rule decide", async () => {
    const host = hostWithPolicy({
      default: "allow",
      rules: [
        { owners: ["user-vip"], allow: ["run-code"] },
        { owners: ["user-*"], deny: ["run-code", "github.*"] },
        { owners: ["*"], allow: ["*"] },
      ],
    });

    expect((await run(host, "user-vip", "run-code")).status).toBe("success");
    const denied = await run(host, "user-1", "run-code");
    expect(denied.error?.message).toBe('policy: owner "user-1" may not run "run-code" (rule 2)');
    // Rule 1 matches the owner but not the skill, so rule 2 decides.
    expect((await run(host, "user-vip", "github.pulls")).error?.message).toContain("(rule 2)");
  });

  it("checks deny before allow within one rule", () => {
    const decide = createPolicy({ rules: [{ allow: ["github.*"], deny: ["github.admin"] }] });
    expect(decide("anyone", "github.admin")).toEqual({ allowed: false, rule: 1 });
    expect(decide("anyone", "github.issues")).toEqual({ allowed: true, rule: 1 });
  });

  it("lets * match scoped skill names, so a catch-all deny cannot be bypassed", () => {
    const decide = createPolicy({ default: "allow", rules: [{ owners: "guest", deny: "*" }] });
    expect(decide("guest", "@acme/weather")).toEqual({ allowed: false, rule: 1 });
    expect(decide("guest", "echo")).toEqual({ allowed: false, rule: 1 });
  });

  it("allows everything when given no options", async () => {
    const host = hostWithPolicy({});
    expect((await run(host, "anyone", "run-code")).status).toBe("success");
  });

  it("checks nested calls under the caller's owner", async () => {
    const host = hostWithPolicy({ default: "allow", rules: [{ owners: "user-*", deny: "run-code" }] });
    host.registry.register({ name: "wrapper", version: "1.0.0", handler: "wrapper", apiKeyId: "system" });
    host.executor.registerHandler("wrapper", (_input, context) => context.call("run-code", {}));

    const result = await run(host, "user-1", "wrapper");

    // The refusal of the nested call propagates through `ctx.call`, so the caller is denied too.
    expect(result.status).toBe("denied");
    expect(result.error?.code).toBe("DENIED");
    const [nested] = await host.executor.listExecutions({ skill: "run-code" });
    expect(nested).toMatchObject({
      status: "denied",
      apiKeyId: "user-1",
      parentExecutionId: expect.any(String),
    });
  });

  it.each([
    [{ default: "maybe" }, '`default` must be "allow" or "deny"'],
    [{ rules: {} }, "`rules` must be an array of rules"],
    [
      { rules: [{ owners: 5, allow: "echo" }] },
      "`rules.0.owners` must be a glob pattern or an array of glob patterns",
    ],
    [{ rules: [{ allow: "echo" }, { owners: "user-*" }] }, "`rules.1` needs `allow` or `deny`"],
    [{ rules: [{ alow: ["echo"] }] }, "unknown field `rules.0.alow`"],
    [{ rules: ["echo"] }, "`rules.0` must be an object"],
    [{ defaults: "deny" }, "unknown field `defaults`"],
    ["deny", "value must be an object"],
  ])("rejects malformed options %j, naming the field", (options, expected) => {
    expect(() => createPolicyInterceptor(options as PolicyOptions)).toThrow(
      expect.objectContaining({
        code: "MANIFEST_INVALID",
        message: expect.stringContaining(`interceptor "policy" options: ${expected}`),
      }),
    );
  });
});
