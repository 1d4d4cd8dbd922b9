import { z } from "zod";

/** What `GET /api/events` can stream: `executions` (the caller's) and `activity` (the loader's). */
const EVENT_KINDS = ["executions", "activity"] as const;

/** One kind of `GET /api/events`. */
export type EventKind = (typeof EVENT_KINDS)[number];

/** Query of `GET /api/events`. */
export const eventsQuerySchema = z.strictObject({
  skill: z.string().min(1, "must not be empty").max(200, "must be at most 200 characters").optional(),
  kinds: z
    .string()
    .transform((value, context) => {
      const kinds = [...new Set(value.split(",").map((kind) => kind.trim()))];
      const unknown = kinds.filter((kind) => !(EVENT_KINDS as readonly string[]).includes(kind));
      if (unknown.length > 0 || kinds.length === 0) {
        context.addIssue({
          code: "custom",
          message: `must be among ${EVENT_KINDS.join(", ")} (comma-separated), got ${JSON.stringify(value)}`,
        });
        return z.NEVER;
      }
      return kinds as EventKind[];
    })
    .optional(),
});
