import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import { SkillboxError } from "../errors/skillbox-error.js";
import type { JsonSchema, Skill } from "../types.js";

// ajv-formats is CommonJS with `exports.default`; under NodeNext the default import is the module object.
type AddFormats = (ajv: Ajv) => Ajv;
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ??
  (addFormatsModule as unknown as AddFormats);

interface CompiledSchemas {
  input: ValidateFunction;
  output: ValidateFunction | undefined;
}

/**
 * Validates inputs and outputs against a skill's JSON Schemas with Ajv. Each schema is
 * compiled once per skill version (keyed by id and content hash) and reused.
 */
export class SchemaValidator {
  private readonly ajv = new Ajv({ allErrors: true, strict: false });
  private readonly compiled = new Map<string, CompiledSchemas>();

  constructor() {
    addFormats(this.ajv);
  }

  /** Throws `INPUT_INVALID` with Ajv's messages when `input` does not match. */
  validateInput(skill: Skill, input: unknown): void {
    const validate = this.schemasOf(skill).input;
    if (!validate(input)) throw this.failure("INPUT_INVALID", "input", skill, validate.errors);
  }

  /** Throws `OUTPUT_INVALID` when the skill has an output schema and `output` does not match. */
  validateOutput(skill: Skill, output: unknown): void {
    const validate = this.schemasOf(skill).output;
    if (validate && !validate(output)) throw this.failure("OUTPUT_INVALID", "output", skill, validate.errors);
  }

  private schemasOf(skill: Skill): CompiledSchemas {
    const key = `${skill.id}\u0000${skill.contentHash}`;
    let schemas = this.compiled.get(key);
    if (schemas === undefined) {
      schemas = {
        input: this.compile(skill, "input", skill.schema.input),
        output:
          skill.schema.output === undefined ? undefined : this.compile(skill, "output", skill.schema.output),
      };
      this.compiled.set(key, schemas);
    }
    return schemas;
  }

  private compile(skill: Skill, which: "input" | "output", schema: JsonSchema): ValidateFunction {
    try {
      return this.ajv.compile(schema);
    } catch (error) {
      throw new SkillboxError(
        which === "input" ? "INPUT_INVALID" : "OUTPUT_INVALID",
        `Skill ${skill.name}@${skill.version}: its ${which} schema is not valid JSON Schema (${(error as Error).message}). Fix \`${which}\` in its definition.`,
        { cause: error },
      );
    }
  }

  private failure(
    code: "INPUT_INVALID" | "OUTPUT_INVALID",
    which: "input" | "output",
    skill: Skill,
    errors: ErrorObject[] | null | undefined,
  ): SkillboxError {
    const details = this.ajv.errorsText(errors, { dataVar: which, separator: "; " });
    return new SkillboxError(
      code,
      `${which} of ${skill.name}@${skill.version} does not match its schema: ${details}`,
      {
        data: errors?.map(({ instancePath, keyword, message, params }) => ({
          instancePath,
          keyword,
          message,
          params,
        })),
      },
    );
  }
}
