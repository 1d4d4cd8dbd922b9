import type { JsonSchema, Skill, SkillRegistration } from "@skillbox/core";
import { describe, expect, it } from "vitest";
import { SchemaValidator } from "../../src/executor/schema-validator.js";
import { registerSkill, useTemporaryHosts } from "./executor-test-bed.js";

const newHost = useTemporaryHosts();

const AMOUNT_INPUT: JsonSchema = {
  type: "object",
  properties: { amount: { type: "number" }, currency: { type: "string", minLength: 3 } },
  required: ["amount"],
};

/** A stored skill (registered through a real registry), as the executor gets it. */
function storedSkill(registration: Partial<SkillRegistration> & { name: string }): Skill {
  return registerSkill(newHost(), { input: AMOUNT_INPUT, ...registration });
}

/** The error `validate` throws (it must throw). */
function thrown(validate: () => void) {
  try {
    validate();
  } catch (error) {
    return error as { code: string; message: string; data?: unknown };
  }
  throw new Error("expected a validation error");
}

describe("SchemaValidator", () => {
  describe("errors", () => {
    it("answers INPUT_INVALID naming the input field, the skill and every failed rule", () => {
      const skill = storedSkill({ name: "charge" });
      const validator = new SchemaValidator();
      validator.validateInput(skill, { amount: 10, currency: "EUR" });
      const error = thrown(() => validator.validateInput(skill, { amount: "ten", currency: "E" }));
      expect(error.code).toBe("INPUT_INVALID");
      expect(error.message).toContain("input of charge@1.0.0 does not match its schema");
      // allErrors: both wrong fields are named, each by its path under `input`.
      expect(error.message).toContain("input/amount must be number");
      expect(error.message).toContain("input/currency must NOT have fewer than 3 characters");
      expect(error.data).toEqual([
        expect.objectContaining({ instancePath: "/amount", keyword: "type" }),
        expect.objectContaining({ instancePath: "/currency", keyword: "minLength" }),
      ]);
    });

    it("names a missing required field", () => {
      const skill = storedSkill({ name: "charge" });
      const error = thrown(() => new SchemaValidator().validateInput(skill, { currency: "EUR" }));
      expect(error.code).toBe("INPUT_INVALID");
      expect(error.message).toContain("input must have required property 'amount'");
      expect(error.data).toEqual([
        expect.objectContaining({
          instancePath: "",
          keyword: "required",
          params: { missingProperty: "amount" },
        }),
      ]);
    });

    it("answers OUTPUT_INVALID naming the output field, and accepts any output without an output schema", () => {
      const skill = storedSkill({
        name: "quote",
        output: { type: "object", properties: { total: { type: "integer" } }, required: ["total"] },
      });
      const validator = new SchemaValidator();
      validator.validateOutput(skill, { total: 3 });
      const error = thrown(() => validator.validateOutput(skill, { total: 3.5 }));
      expect(error.code).toBe("OUTPUT_INVALID");
      expect(error.message).toContain("output of quote@1.0.0 does not match its schema");
      expect(error.message).toContain("output/total must be integer");
      expect(error.message).not.toContain("input");
      const free = storedSkill({ name: "free" });
      expect(free.schema.output).toBeUndefined();
      validator.validateOutput(free, "anything at all");
      validator.validateOutput(free, undefined);
    });

    it("blames the skill's own schema, naming which one, when it is not valid JSON Schema", () => {
      // Registration refuses such a schema; a definition edited in the database gets here.
      const skill = storedSkill({ name: "broken" });
      const validator = new SchemaValidator();
      const brokenInput = { ...skill, contentHash: "edited", schema: { input: { type: "no-such-type" } } };
      const input = thrown(() => validator.validateInput(brokenInput, {}));
      expect(input.code).toBe("INPUT_INVALID");
      expect(input.message).toContain("its input schema is not valid JSON Schema");
      const brokenOutput = {
        ...skill,
        contentHash: "edited again",
        schema: { input: {}, output: { type: "object", required: "total" } },
      };
      const output = thrown(() => validator.validateOutput(brokenOutput, {}));
      expect(output.code).toBe("OUTPUT_INVALID");
      expect(output.message).toContain("its output schema is not valid JSON Schema");
    });
  });

  describe("compiled validators", () => {
    it("keeps one compiled validator per skill version, and compiles again when the definition changes", () => {
      const skill = storedSkill({ name: "charge" });
      const validator = new SchemaValidator();
      validator.validateInput(skill, { amount: 1 });
      // The same id and content hash is the same definition: its compiled schema is used as it
      // is, so a schema swapped under it (which no real caller does) is not even read.
      const sameVersion = { ...skill, schema: { input: { type: "string" } } };
      validator.validateInput(sameVersion, { amount: 1 });
      // A changed definition (the registry gives it a new content hash) is compiled anew.
      const host = newHost();
      const first = registerSkill(host, { name: "charge", input: AMOUNT_INPUT });
      validator.validateInput(first, { amount: 1 });
      const edited = registerSkill(host, { name: "charge", input: { type: "string" } });
      expect(edited.id).toBe(first.id);
      expect(edited.contentHash).not.toBe(first.contentHash);
      expect(thrown(() => validator.validateInput(edited, { amount: 1 })).message).toContain(
        "input must be string",
      );
      validator.validateInput(edited, "now a string");
    });

    it("compiles nothing for a definition whose schemas did not change (a hot reload of its code)", () => {
      // Ajv refuses to compile a second schema with the `$id` of one it holds: a reload that
      // compiled the unchanged schema again would fail here.
      const input: JsonSchema = { $id: "urn:skillbox-test:charge-input", ...AMOUNT_INPUT };
      const host = newHost();
      const first = registerSkill(host, { name: "charge", input, description: "first" });
      const validator = new SchemaValidator();
      validator.validateInput(first, { amount: 1 });
      const reloaded = registerSkill(host, { name: "charge", input, description: "reloaded" });
      expect(reloaded.contentHash).not.toBe(first.contentHash);
      expect(reloaded.schema.input).not.toBe(first.schema.input);
      validator.validateInput(reloaded, { amount: 2 });
      // Another skill with the very same schema shares the compiled validator too.
      const other = registerSkill(host, { name: "refund", input });
      validator.validateInput(other, { amount: 3 });
      expect(thrown(() => validator.validateInput(other, {})).code).toBe("INPUT_INVALID");
    });

    it("forgets the compiled schemas no skill uses any more once they pile up", () => {
      const host = newHost();
      const validator = new SchemaValidator();
      const steady = registerSkill(host, { name: "steady", input: AMOUNT_INPUT });
      // One skill edited far more often than the stale validators tolerated before starting
      // over; each version's schema has an `$id` of its own, which Ajv holds while it holds it.
      const editedSchema = (edit: number): JsonSchema => ({
        $id: `https://skillbox.test/edited-${edit}.json`,
        type: "object",
        properties: { [`field${edit}`]: { type: "number" } },
        required: [`field${edit}`],
      });
      for (let edit = 0; edit < 600; edit++) {
        const edited = registerSkill(host, { name: "edited", input: editedSchema(edit) });
        validator.validateInput(edited, { [`field${edit}`]: edit });
        expect(thrown(() => validator.validateInput(edited, {})).message).toContain(
          `must have required property 'field${edit}'`,
        );
        // The skill in use keeps validating across every fresh start.
        validator.validateInput(steady, { amount: edit });
      }
      expect(thrown(() => validator.validateInput(steady, {})).message).toContain(
        "must have required property 'amount'",
      );
      // The first versions' schemas are gone: their `$id` compiles again, for another schema.
      const reused = registerSkill(host, {
        name: "reused",
        input: { ...editedSchema(0), required: ["other"] },
      });
      expect(thrown(() => validator.validateInput(reused, { field0: 1 })).message).toContain(
        "must have required property 'other'",
      );
    });

    // Regression: a new version of a skill whose schema keeps its `$id` did not compile in the
    // Ajv that still held the previous version, so every call failed INPUT_INVALID blaming a
    // valid schema (registration, which forgets what it checked, accepted it).
    it("compiles an edited schema that keeps its $id", () => {
      const host = newHost();
      const validator = new SchemaValidator();
      const $id = "https://skillbox.test/charge-input.json";
      const first = registerSkill(host, { name: "charge", input: { $id, ...AMOUNT_INPUT } });
      validator.validateInput(first, { amount: 1 });
      const edited = registerSkill(host, { name: "charge", input: { $id, ...AMOUNT_INPUT, required: [] } });
      validator.validateInput(edited, {});
    });
  });
});
