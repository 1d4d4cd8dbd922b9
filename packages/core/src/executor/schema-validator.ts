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
  contentHash: string;
  input: ValidateFunction;
  output: ValidateFunction | undefined;
}

/** Compiled validators that no skill uses any more, tolerated before Ajv is replaced. */
const STALE_VALIDATOR_ALLOWANCE = 200;

function createAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  return ajv;
}

/** Ajv configured as the executor's, for checking schemas before any call (kept empty: see below). */
let checker: Ajv | undefined;
/** Results by schema text: registering an unchanged skill again compiles nothing. */
const checked = new Map<string, string | undefined>();
/** Distinct schemas remembered before starting over (edits while watching add new ones). */
const CHECKED_LIMIT = 1000;

function compileProblem(schema: JsonSchema): string | undefined {
  checker ??= createAjv();
  try {
    checker.compile(schema);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    // Forget the schema (and its `$id`): checking the next version of it must not clash.
    checker.removeSchema(schema);
  }
}

/**
 * Why `schema` would not compile in the executor (Ajv's message), or undefined when it compiles.
 * Registration, loaders and `skillbox validate` refuse a broken schema up front, so a caller
 * never gets `INPUT_INVALID` for the skill's own mistake.
 */
export function findJsonSchemaProblem(schema: JsonSchema): string | undefined {
  const key = JSON.stringify(schema);
  if (checked.has(key)) return checked.get(key);
  if (checked.size >= CHECKED_LIMIT) checked.clear();
  const problem = compileProblem(schema);
  checked.set(key, problem);
  return problem;
}

/**
 * Validates inputs and outputs against a skill's JSON Schemas with Ajv. Validators are compiled
 * once per distinct schema (keyed by its JSON text), so re-registering a skill whose schemas did
 * not change — a hot reload of its code — compiles nothing. Each skill id keeps one entry,
 * replaced when its definition changes. Ajv never forgets a compiled schema, so when stale
 * validators pile up the Ajv instance is replaced and live schemas recompile on demand.
 */
export class SchemaValidator {
  private ajv = createAjv();
  private readonly bySkill = new Map<string, CompiledSchemas>();
  private bySchema = new Map<string, ValidateFunction>();

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
    let schemas = this.bySkill.get(skill.id);
    if (schemas === undefined || schemas.contentHash !== skill.contentHash) {
      if (this.bySchema.size > 2 * this.bySkill.size + STALE_VALIDATOR_ALLOWANCE) this.replaceAjv();
      schemas = {
        contentHash: skill.contentHash,
        input: this.validatorFor(skill, "input", skill.schema.input),
        output:
          skill.schema.output === undefined
            ? undefined
            : this.validatorFor(skill, "output", skill.schema.output),
      };
      this.bySkill.set(skill.id, schemas);
    }
    return schemas;
  }

  private validatorFor(skill: Skill, which: "input" | "output", schema: JsonSchema): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.bySchema.get(key);
    if (validate === undefined) {
      validate = this.compile(skill, which, schema);
      this.bySchema.set(key, validate);
    }
    return validate;
  }

  private replaceAjv(): void {
    this.ajv = createAjv();
    this.bySchema = new Map();
    this.bySkill.clear();
  }

  private compile(skill: Skill, which: "input" | "output", schema: JsonSchema): ValidateFunction {
    try {
      // An edited schema that keeps its `$id` would clash with the version compiled before it
      // (Ajv keys schemas by `$id`); the old version's compiled function stays cached by its text.
      if (typeof schema.$id === "string") this.ajv.removeSchema(schema.$id);
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
