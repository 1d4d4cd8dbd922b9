import { z } from "zod";
import { SkillboxError } from "./errors/skillbox-error.js";
import type {
  JsonSchema,
  RetryPolicy,
  SkillContext,
  SkillHandler,
  SkillRuntimeName,
  SkillSandboxSettings,
} from "./types.js";

/** A schema given as zod (converted to JSON Schema) or as JSON Schema. */
export type SchemaInput = z.ZodType | JsonSchema;

type Infer<Schema, Fallback> = Schema extends z.ZodType ? z.output<Schema> : Fallback;
/** A JSON Schema carries no static type, so its handler input is untyped; no schema means unknown. */
// biome-ignore lint/suspicious/noExplicitAny: JSON-Schema-typed handlers read input fields freely.
type UntypedInput<Schema> = Schema extends undefined ? unknown : any;

/** The manifest fields a skill may also declare in code (the manifest wins when both set one). */
export interface SkillCodeFields {
  name?: string;
  version?: string;
  description?: string;
  runtime?: SkillRuntimeName;
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  memoryMb?: number;
  sandbox?: SkillSandboxSettings;
  requires?: Record<string, string>;
  tags?: string[];
  /**
   * `"required"`: every execution waits for a person's approval. A function decides per input:
   * true (or a string, the reason shown to the approver) asks for approval before the handler runs.
   */
  approval?: "required" | ApprovalPredicate;
  /** How long an execution may wait for approval, in ms. */
  approvalTimeoutMs?: number;
  /** Most background executions of this skill one host runs at once. */
  concurrency?: number;
  /** Safe to run again after its host died mid-run (a submitted execution is then re-queued). */
  idempotent?: boolean;
}

/**
 * Decides whether an execution needs approval: `true` or a reason asks for it, `false` (or an
 * empty string) lets it run. Called with the validated input before the handler, in the handler's runtime.
 */
export type ApprovalPredicate = (
  // biome-ignore lint/suspicious/noExplicitAny: the predicate reads fields of the input, typed or not.
  input: any,
  context: SkillContext,
) => boolean | string | Promise<boolean | string>;

/** What `defineSkill` accepts: the handler, its schemas and optional manifest fields. */
export interface SkillDefinitionOptions<
  Input extends SchemaInput | undefined,
  Output extends SchemaInput | undefined,
> extends SkillCodeFields {
  input?: Input;
  output?: Output;
  handler: (
    input: Infer<Input, UntypedInput<Input>>,
    context: SkillContext,
  ) => Infer<Output, unknown> | Promise<Infer<Output, unknown>>;
}

/** The value `defineSkill` returns: JSON Schemas plus the handler, recognisable by loaders. */
export interface DefinedSkill extends SkillCodeFields {
  readonly kind: "skillbox.skill";
  input?: JsonSchema;
  output?: JsonSchema;
  handler: SkillHandler;
}

function isZodSchema(value: unknown): value is z.ZodType {
  return typeof value === "object" && value !== null && "_zod" in value;
}

function toJsonSchema(schema: SchemaInput | undefined, field: string): JsonSchema | undefined {
  if (schema === undefined) return undefined;
  if (!isZodSchema(schema)) return schema;
  try {
    // "input" mode describes what callers may send (defaults make fields optional).
    const { $schema: _dialect, ...json } = z.toJSONSchema(schema, {
      io: field === "input" ? "input" : "output",
      unrepresentable: "any",
    }) as JsonSchema;
    return json;
  } catch (error) {
    throw new SkillboxError(
      "REGISTRATION_INVALID",
      `defineSkill: \`${field}\` cannot be expressed as JSON Schema (${(error as Error).message}); use plain zod types`,
      { cause: error },
    );
  }
}

/**
 * Declares a skill in code with a typed handler. Zod schemas are converted to JSON Schema for
 * the registry (and, at run time, the executor validates with those); inputs reach the handler
 * already validated. A handler module's default export may be this value or a bare function.
 */
export function defineSkill<
  Input extends SchemaInput | undefined = undefined,
  Output extends SchemaInput | undefined = undefined,
>(options: SkillDefinitionOptions<Input, Output>): DefinedSkill {
  if (typeof options?.handler !== "function") {
    throw new SkillboxError("REGISTRATION_INVALID", "defineSkill: `handler` must be a function");
  }
  const { input, output, handler, ...rest } = options;
  // The executor validates against the JSON Schema; parsing with zod as well hands the handler
  // exactly the type it declares (defaults filled in, transforms applied).
  const typedHandler: SkillHandler = isZodSchema(input)
    ? (value, context) => handler(input.parse(value) as never, context)
    : (handler as SkillHandler);
  const approval = options.approval;
  if (approval !== undefined && approval !== "required" && typeof approval !== "function") {
    throw new SkillboxError(
      "REGISTRATION_INVALID",
      'defineSkill: `approval` must be "required" or a function of (input, ctx) returning true or a reason',
    );
  }
  return {
    ...rest,
    kind: "skillbox.skill",
    input: toJsonSchema(input, "input"),
    output: toJsonSchema(output, "output"),
    handler: typeof approval === "function" ? guardedByApproval(typedHandler, approval) : typedHandler,
  };
}

/** A handler that first asks `predicate` whether this input needs approval, unless it has it already. */
function guardedByApproval(handler: SkillHandler, predicate: ApprovalPredicate): SkillHandler {
  return async (value, context) => {
    if (context.approval?.decision !== "approved") {
      const needed = await predicate(value, context);
      if (needed === true || (typeof needed === "string" && needed !== "")) {
        const reason =
          typeof needed === "string" ? needed : `${context.skill.name} asks for approval of this input`;
        throw new SkillboxError("APPROVAL_REQUIRED", reason, { data: { requestedBy: "skill" } });
      }
    }
    return handler(value, context);
  };
}

/** True for values returned by {@link defineSkill} (also across copies of this package). */
export function isDefinedSkill(value: unknown): value is DefinedSkill {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { kind?: unknown }).kind === "skillbox.skill" &&
    typeof (value as { handler?: unknown }).handler === "function"
  );
}
