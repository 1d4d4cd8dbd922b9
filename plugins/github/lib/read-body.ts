import { setTimeout as sleep } from "node:timers/promises";
import { SkillboxError } from "@skillbox/core/handler";

/** Largest single GitHub answer read (a page of 100 issues with long bodies stays far below). */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

function tooLarge(url: string): SkillboxError {
  return new SkillboxError(
    "SIZE_LIMIT_EXCEEDED",
    `GitHub's answer for GET ${url} is larger than ${MAX_RESPONSE_BYTES} bytes; ask for fewer items (a smaller \`limit\`)`,
    { data: { url, maxBytes: MAX_RESPONSE_BYTES } },
  );
}

/** Reads a response body as text, refusing (and cancelling the download) past {@link MAX_RESPONSE_BYTES}. */
export async function readBodyText(response: Response, url: string): Promise<string> {
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > MAX_RESPONSE_BYTES) {
    await response.body?.cancel();
    throw tooLarge(url);
  }
  if (response.body === null) return "";
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of response.body) {
    total += chunk.byteLength;
    if (total > MAX_RESPONSE_BYTES) throw tooLarge(url);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Discards a body we do not need, so the connection can be reused; failures do not matter. */
export async function discardBody(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}

/**
 * Waits `milliseconds`, or rejects with the signal's reason (the executor's `TIMEOUT` or
 * `CANCELLED`) as soon as it aborts, so a wait never outlives the execution.
 */
export async function pause(milliseconds: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(milliseconds, undefined, { signal });
  } catch (error) {
    throw signal.aborted ? signal.reason : error;
  }
}
