import { z } from "zod";

/** Query of routes that take none: an unknown parameter is refused, not ignored (a typo says so). */
export const emptyQuerySchema = z.strictObject({});
