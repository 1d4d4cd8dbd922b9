import type { Skill } from "@skillbox/core";
import { extractToolCalls, toGeminiSchema, toTools } from "@skillbox/llm";
import { describe, expect, it } from "vitest";

function makeSkill(overrides: Partial<Skill> & Pick<Skill, "name">): Skill {
  return {
    id: `${overrides.name}@${overrides.version ?? "1.0.0"}`,
    version: "1.0.0",
    description: `The ${overrides.name} skill`,
    apiKeyId: "system",
    schema: { input: { type: "object", properties: { msg: { type: "string" } }, required: ["msg"] } },
    handler: "echo",
    runtime: "inline",
    tags: [],
    enabled: true,
    source: "api",
    contentHash: "hash",
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: "2026-01-01T00:00:00.000Z",
    ...overrides,
  };
}

const echoParameters = { type: "object", properties: { msg: { type: "string" } }, required: ["msg"] };

describe("toTools", () => {
  const skills = [
    makeSkill({ name: "echo", version: "2.0.0" }),
    makeSkill({ name: "echo", version: "1.0.0" }),
  ];

  it("writes OpenAI Chat function tools, one per skill name", () => {
    expect(toTools(skills, "openai-chat")).toEqual([
      {
        type: "function",
        function: { name: "echo", description: "The echo skill", parameters: echoParameters },
      },
    ]);
  });

  it("writes one tool per version when versions are pinned", () => {
    const tools = toTools(skills, "openai-responses", { pinVersions: true });
    expect(tools).toEqual([
      {
        type: "function",
        name: "echo_v2_0_0",
        description: "The echo skill",
        parameters: echoParameters,
        strict: false,
      },
      {
        type: "function",
        name: "echo_v1_0_0",
        description: "The echo skill",
        parameters: echoParameters,
        strict: false,
      },
    ]);
  });

  it("writes Anthropic tools with input_schema", () => {
    expect(toTools([makeSkill({ name: "@acme/weather" })], "anthropic")).toEqual([
      {
        name: "acme__weather",
        description: "The @acme/weather skill",
        input_schema: echoParameters,
      },
    ]);
  });

  it("writes one Gemini tool holding every declaration, without parameters for a skill without inputs", () => {
    const tools = toTools(
      [makeSkill({ name: "echo" }), makeSkill({ name: "github.issues", schema: { input: {} } })],
      "gemini",
    );
    expect(tools).toEqual([
      {
        functionDeclarations: [
          { name: "echo", description: "The echo skill", parameters: echoParameters },
          { name: "github_issues", description: "The github.issues skill" },
        ],
      },
    ]);
    expect(toTools([], "gemini")).toEqual([]);
  });

  it("wraps a non-object input as { input } because providers want object parameters", () => {
    const shout = makeSkill({ name: "shout", schema: { input: { type: "string", minLength: 1 } } });
    expect(toTools([shout], "anthropic")).toEqual([
      {
        name: "shout",
        description: "The shout skill",
        input_schema: {
          type: "object",
          properties: { input: { type: "string", minLength: 1 } },
          required: ["input"],
        },
      },
    ]);
  });

  it("gives an unconstrained input an object type and a skill without description a description", () => {
    const [tool] = toTools(
      [makeSkill({ name: "any", description: "", schema: { input: {} } })],
      "openai-chat",
    );
    expect(tool).toEqual({
      type: "function",
      function: {
        name: "any",
        description: "Runs the skill any",
        parameters: { type: "object", properties: {} },
      },
    });
  });

  it("names colliding skills apart, the same way in every format, and extractToolCalls reads them back", () => {
    const offered = [makeSkill({ name: "a.b" }), makeSkill({ name: "a_b" }), makeSkill({ name: "9lives" })];
    const names = (toTools(offered, "anthropic") as Array<{ name: string }>).map((tool) => tool.name);
    expect(names).toEqual(["a_b_2", "a_b", "_9lives"]);
    const reversed = (toTools([...offered].reverse(), "openai-responses") as Array<{ name: string }>).map(
      (tool) => tool.name,
    );
    expect(reversed).toEqual(["_9lives", "a_b", "a_b_2"]);
    const response = {
      content: names.map((name, index) => ({ type: "tool_use", id: `t${index}`, name, input: {} })),
    };
    expect(extractToolCalls(response, "anthropic", { skills: offered }).map((call) => call.skill)).toEqual([
      { name: "a.b" },
      { name: "a_b" },
      { name: "9lives" },
    ]);
  });

  it("rejects an unknown format with TOOL_FORMAT_INVALID", () => {
    expect(() => toTools(skills, "openai" as never)).toThrowError(
      expect.objectContaining({ code: "TOOL_FORMAT_INVALID" }),
    );
  });
});

describe("toGeminiSchema", () => {
  it("rewrites JSON Schema into Gemini's OpenAPI subset", () => {
    const schema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $id: "https://example.com/order",
      type: "object",
      additionalProperties: false,
      $defs: {
        address: {
          type: "object",
          properties: { city: { type: "string" }, zip: { type: ["string", "null"], pattern: "^[0-9]+$" } },
          required: ["city"],
          additionalProperties: false,
        },
      },
      properties: {
        kind: { const: "order" },
        shipping: { $ref: "#/$defs/address", description: "Where it goes" },
        status: { enum: ["open", "closed", null] },
        quantity: { type: "integer", exclusiveMinimum: 0, maximum: 10 },
        note: { anyOf: [{ type: "string" }, { type: "null" }] },
        tags: { type: "array", items: { type: "string" }, uniqueItems: true },
        choice: { oneOf: [{ type: "string" }, { type: "number" }] },
        extra: { type: "object", patternProperties: { "^x": { type: "string" } } },
      },
      required: ["kind", "shipping", "ghost"],
    };
    expect(toGeminiSchema(schema)).toEqual({
      type: "object",
      properties: {
        kind: { enum: ["order"], type: "string" },
        shipping: {
          type: "object",
          description: "Where it goes",
          properties: {
            city: { type: "string" },
            zip: { type: "string", nullable: true, pattern: "^[0-9]+$" },
          },
          required: ["city"],
        },
        status: { enum: ["open", "closed"], nullable: true, type: "string" },
        quantity: { type: "integer", minimum: 0, maximum: 10 },
        note: { type: "string", nullable: true },
        tags: { type: "array", items: { type: "string" } },
        choice: { anyOf: [{ type: "string" }, { type: "number" }] },
        extra: { type: "object" },
      },
      required: ["kind", "shipping"],
    });
  });

  it("stops a recursive $ref at a plain object and merges allOf", () => {
    const schema = {
      type: "object",
      definitions: {
        node: { type: "object", properties: { child: { $ref: "#/definitions/node" } } },
        named: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
      },
      properties: {
        tree: { $ref: "#/definitions/node" },
        item: { allOf: [{ $ref: "#/definitions/named" }, { properties: { size: { type: "number" } } }] },
        elsewhere: { $ref: "https://example.com/schema.json" },
      },
    };
    const adapted = toGeminiSchema(schema) as { properties: Record<string, Record<string, unknown>> };
    expect(JSON.stringify(adapted)).not.toContain("$ref");
    let depth = 0;
    let node: Record<string, unknown> | undefined = adapted.properties.tree;
    while (node?.properties !== undefined) {
      node = (node.properties as Record<string, Record<string, unknown>>).child;
      depth += 1;
    }
    expect(depth).toBeGreaterThan(3);
    expect(node).toEqual({ type: "object" });
    expect(adapted.properties.item).toEqual({
      type: "object",
      properties: { name: { type: "string" }, size: { type: "number" } },
      required: ["name"],
    });
    expect(adapted.properties.elsewhere).toEqual({ type: "object" });
  });
});
