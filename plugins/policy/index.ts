import { defineInterceptor, deny, type Interceptor, parseInterceptorOptions } from "@skillbox/core";
import picomatch from "picomatch";
import { z } from "zod";

/** One rule: for callers whose owner id matches `owners`, skills matching `deny` are refused and skills matching `allow` are permitted. */
export interface PolicyRule {
  /** Owner id (`apiKeyId`) glob patterns; omitted means every owner. */
  owners?: string | string[];
  /** Skill name glob patterns this rule permits. */
  allow?: string | string[];
  /** Skill name glob patterns this rule refuses; checked before `allow` of the same rule. */
  deny?: string | string[];
}

/** Options of the policy interceptor (the `options` block of `interceptor.json`). */
export interface PolicyOptions {
  /** What happens when no rule matches (default `allow`, so installing the plugin changes nothing until rules are added). */
  default?: "allow" | "deny";
  /** Checked in order; the first rule whose owners and one of whose skill patterns match decides. */
  rules?: PolicyRule[];
}

const patterns = z
  .union([z.string().min(1, "must not be empty"), z.array(z.string().min(1, "must not be empty"))], {
    error: "must be a glob pattern or an array of glob patterns",
  })
  .transform((value) => (typeof value === "string" ? [value] : value));

const ruleSchema = z
  .object(
    { owners: patterns.optional(), allow: patterns.optional(), deny: patterns.optional() },
    { error: "must be an object with `owners`, `allow` and/or `deny`" },
  )
  .strict()
  .refine((rule) => rule.allow !== undefined || rule.deny !== undefined, {
    error: "needs `allow` or `deny` (a rule with neither never decides anything)",
  });

const optionsSchema = z
  .object(
    {
      default: z.enum(["allow", "deny"], { error: 'must be "allow" or "deny"' }).default("allow"),
      rules: z.array(ruleSchema, { error: "must be an array of rules" }).default([]),
    },
    { error: "must be an object" },
  )
  .strict();

type Matcher = (value: string) => boolean;

/**
 * `bash` makes `*` cross `/` too: otherwise `"*"` would not match scoped names like `@acme/weather`,
 * and a `deny: ["*"]` meant as "everything" would quietly let them through.
 */
function compile(patternList: string[] | undefined): Matcher | undefined {
  return patternList === undefined ? undefined : picomatch(patternList, { bash: true, dot: true });
}

interface CompiledRule {
  /** 1-based, as people count rules in a config file. */
  number: number;
  owners: Matcher;
  allow: Matcher | undefined;
  deny: Matcher | undefined;
}

/** What the policy decided, and which rule decided it (`null` for the default). */
export interface PolicyDecision {
  allowed: boolean;
  rule: number | null;
}

/**
 * Compiles options into a function answering "may `owner` run `skill`?". Exported so callers (an
 * HTTP front listing what a key may use, a CLI dry-run) can ask without executing anything.
 */
export function createPolicy(
  options: PolicyOptions = {},
): (owner: string, skillName: string) => PolicyDecision {
  const parsed = parseInterceptorOptions("policy", optionsSchema, options);
  const rules: CompiledRule[] = parsed.rules.map((rule, index) => ({
    number: index + 1,
    owners: compile(rule.owners) ?? (() => true),
    allow: compile(rule.allow),
    deny: compile(rule.deny),
  }));
  const fallback: PolicyDecision = { allowed: parsed.default === "allow", rule: null };
  return (owner, skillName) => {
    for (const rule of rules) {
      if (!rule.owners(owner)) continue;
      if (rule.deny?.(skillName)) return { allowed: false, rule: rule.number };
      if (rule.allow?.(skillName)) return { allowed: true, rule: rule.number };
    }
    return fallback;
  };
}

/**
 * Creates the policy interceptor: allows or denies skills per owner (`apiKeyId`) with glob rules.
 * A refusal throws `deny(...)`, so the execution is recorded `denied` and never retried. It runs
 * early (`order` -50) so nothing else is spent on a refused call, but inside the logger (-100) so
 * refusals are logged. Nested `ctx.call` executions are checked too, under the same owner.
 */
export function createPolicyInterceptor(options: PolicyOptions = {}): Interceptor {
  const decide = createPolicy(options);
  return defineInterceptor({
    name: "policy",
    order: -50,
    before(context) {
      const owner = context.apiKeyId;
      const skillName = context.skill.name;
      const decision = decide(owner, skillName);
      if (decision.allowed) return undefined;
      const reason = decision.rule === null ? "default: deny" : `rule ${decision.rule}`;
      throw deny(`policy: owner "${owner}" may not run "${skillName}" (${reason})`, {
        owner,
        skill: skillName,
        rule: decision.rule,
      });
    },
  });
}

/** The plugin's entry point: the loader calls it with the manifest's `options`. */
export default createPolicyInterceptor;
