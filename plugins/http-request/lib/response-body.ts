import { SkillboxError } from "@skillbox/core/handler";
import type { Response } from "undici";
import { HTTP_REQUEST_ENVIRONMENT } from "./http-request-settings.js";

/** How the response body is returned: as text, parsed JSON or base64 bytes. */
export type ResponseType = "text" | "json" | "base64";

/** The body part of the skill's output (exactly one of the fields, by response type). */
export type DecodedBody = { body: string } | { json: unknown } | { base64: string };

function tooLarge(host: string, limit: number, contentLength?: number): SkillboxError {
  const size = contentLength === undefined ? "more than" : `${contentLength} bytes, more than`;
  return new SkillboxError(
    "SIZE_LIMIT_EXCEEDED",
    `http-request: the response from ${host} is ${size} the ${limit}-byte limit; ask for something smaller, ` +
      `or raise \`maxResponseBytes\` (up to ${HTTP_REQUEST_ENVIRONMENT.maxResponseBytes})`,
    { data: { host, limit, ...(contentLength === undefined ? {} : { contentLength }) } },
  );
}

/**
 * Reads the whole body, but never more than `limit` bytes: a declared Content-Length above the
 * limit is refused before reading, and a body that grows past it (chunked, or lying about its
 * length) is refused at the byte that crosses it. Either way `abort` is called so the connection is
 * closed instead of drained. Bytes are counted after decompression, so a small gzip bomb is caught too.
 */
export async function readLimitedBody(
  response: Response,
  options: { host: string; limit: number; abort: () => void },
): Promise<Uint8Array> {
  const { host, limit, abort } = options;
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limit) {
    abort();
    throw tooLarge(host, limit, declared);
  }
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      abort();
      await reader.cancel().catch(() => undefined);
      throw tooLarge(host, limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

function mediaType(contentType: string | null): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/** JSON for `application/json` and `+json`, text for `text/*`, XML, JavaScript, forms or a declared charset, else base64. */
function responseTypeFor(contentType: string | null): ResponseType {
  const type = mediaType(contentType);
  if (type === "application/json" || type.endsWith("+json")) return "json";
  if (type.startsWith("text/") || type.endsWith("+xml") || type.endsWith("/xml")) return "text";
  if (type === "application/javascript" || type === "application/x-www-form-urlencoded") return "text";
  return /;\s*charset=/i.test(contentType ?? "") ? "text" : "base64";
}

function decodeText(bytes: Uint8Array, contentType: string | null): string {
  const charset = /;\s*charset="?([^";\s]+)/i.exec(contentType ?? "")?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(bytes);
  } catch {
    // An unknown charset label: UTF-8 is the best guess and never throws (invalid bytes become U+FFFD).
    return new TextDecoder("utf-8").decode(bytes);
  }
}

/**
 * Decodes the body as asked, or by content type when `requested` is undefined. An empty body is
 * `body: ""` (or `base64: ""` when asked for). Asked-for JSON that does not parse is an `UPSTREAM_ERROR`;
 * JSON chosen only by content type falls back to text, since the server's label was wrong, not the caller.
 */
export function decodeBody(
  bytes: Uint8Array,
  contentType: string | null,
  requested: ResponseType | undefined,
  host: string,
): DecodedBody {
  // Without a body there is nothing to parse or encode; `body: ""` says so unless base64 was asked for.
  const responseType =
    bytes.byteLength === 0
      ? requested === "base64"
        ? "base64"
        : "text"
      : (requested ?? responseTypeFor(contentType));
  if (responseType === "base64") return { base64: Buffer.from(bytes).toString("base64") };
  const text = decodeText(bytes, contentType);
  if (responseType === "text") return { body: text };
  try {
    return { json: JSON.parse(text) as unknown };
  } catch (error) {
    if (requested === undefined) return { body: text };
    throw new SkillboxError(
      "UPSTREAM_ERROR",
      `http-request: the response from ${host} is not valid JSON (${(error as Error).message}); ask for \`responseType: "text"\` to see it`,
      { retryable: false, cause: error, data: { host } },
    );
  }
}
