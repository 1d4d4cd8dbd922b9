import { z } from "zod";
import { MAX_RESPONSE_BYTES_CEILING, TOKEN_PATTERN } from "./http-request-settings.js";

/** The skill's input; `skill.json` declares the same schema. */
export const httpRequestInput = z
  .object({
    url: z.url().describe("Absolute http:// or https:// URL"),
    method: z
      .string()
      .regex(new RegExp(TOKEN_PATTERN))
      .default("GET")
      .describe("HTTP method; must be in SKILLBOX_HTTP_ALLOWED_METHODS (default GET, HEAD, OPTIONS)"),
    headers: z
      // RFC 9110 field values: tab, visible ASCII and obs-text; anything else fetch refuses to send.
      .record(z.string().regex(new RegExp(TOKEN_PATTERN)), z.string().regex(/^[\t\x20-\x7e\x80-\xff]*$/))
      .optional()
      .describe("Request headers; credentials and hop-by-hop headers are dropped unless configured"),
    body: z.string().optional().describe("Request body as text (not with `json`)"),
    json: z
      .unknown()
      .optional()
      .describe("Request body as JSON; sets content-type application/json (not with `body`)"),
    responseType: z
      .enum(["text", "json", "base64"])
      .optional()
      .describe("How to return the body; by default chosen from the response content-type"),
    maxResponseBytes: z
      .int()
      .min(1)
      .max(MAX_RESPONSE_BYTES_CEILING)
      .optional()
      .describe("Lower cap on the response body for this call (at most SKILLBOX_HTTP_MAX_RESPONSE_BYTES)"),
    followRedirects: z
      .boolean()
      .default(true)
      .describe("Follow 3xx redirects (each hop is checked again); false returns the 3xx response"),
  })
  .strict();

/** The skill's output; `skill.json` declares the same schema. */
export const httpRequestOutput = z
  .object({
    status: z.int().min(100).max(999),
    statusText: z.string(),
    url: z.string().describe("The final URL, after redirects"),
    redirects: z.array(z.string()).describe("Every URL redirected to, in order"),
    headers: z.record(z.string(), z.string()).describe("Response headers; set-cookie only when configured"),
    body: z.string().optional().describe("The body as text (responseType text, or an empty body)"),
    json: z.unknown().optional().describe("The parsed body (responseType json)"),
    base64: z.string().optional().describe("The body bytes in base64 (responseType base64)"),
    bytes: z
      .int()
      .min(0)
      .max(MAX_RESPONSE_BYTES_CEILING)
      .describe("Body size in bytes (after decompression)"),
  })
  .strict();

/** Parsed input, defaults applied. */
export type HttpRequestInput = z.output<typeof httpRequestInput>;
/** What the skill returns. */
export type HttpRequestOutput = z.output<typeof httpRequestOutput>;
