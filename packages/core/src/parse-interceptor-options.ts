import type { z } from "zod";
import { SkillboxError } from "./errors/skillbox-error.js";
import { formatZodIssues } from "./schemas.js";

/**
 * Validates the `options` an interceptor plugin receives (its manifest's `options` block) with
 * a zod schema. A mismatch throws `MANIFEST_INVALID` naming the interceptor and the field;
 * missing options count as `{}` so that schema defaults apply.
 */
export function parseInterceptorOptions<Schema extends z.ZodType>(
  interceptor: string,
  schema: Schema,
  options: unknown,
): z.output<Schema> {
  const parsed = schema.safeParse(options ?? {});
  if (parsed.success) return parsed.data;
  throw new SkillboxError(
    "MANIFEST_INVALID",
    formatZodIssues(parsed.error, `interceptor "${interceptor}" options`),
    {
      data: { interceptor, issues: parsed.error.issues },
    },
  );
}
