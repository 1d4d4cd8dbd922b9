import { z } from "zod";

/**
 * A whole number from `minimum` to `maximum`, given as query text; `unit` names what it counts
 * in the message ("a whole number of seconds from 1 to 86400").
 */
export function wholeNumber(minimum: number, maximum: number, unit?: string) {
  const message = `must be a whole number${unit === undefined ? "" : ` of ${unit}`} from ${minimum} to ${maximum}`;
  return z
    .string()
    .regex(/^\d+$/, message)
    .transform(Number)
    .pipe(z.number().min(minimum, message).max(maximum, message));
}

/** A date parameter such as `since`, in any form `Date.parse` reads (ISO 8601 above all). */
export function isoDate() {
  return z
    .string()
    .refine((value) => !Number.isNaN(Date.parse(value)), "must be a date such as 2025-01-31T12:00:00Z");
}
