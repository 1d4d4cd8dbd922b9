import { A2AError, isJsonRpcError, isRestError } from "@a2a-js/sdk/errors";
import { isSkillboxError, SkillboxError } from "@skillbox/core/handler";
import { A2A_ENVIRONMENT } from "./a2a-settings.js";

const MAX_DETAIL_LENGTH = 500;
const JSON_RPC_INTERNAL_ERROR = -32603;

/**
 * What the skill throws for an error of the A2A client: its own refusals (`URL_REFUSED`,
 * `SIZE_LIMIT_EXCEEDED`, …) as they are, an abort as it is (the executor reports the timeout or
 * cancellation), and anything the agent or the network did as `UPSTREAM_ERROR` — retryable for
 * network failures, HTTP 5xx and JSON-RPC internal errors — with `data` saying what came back.
 */
export function toUpstreamError(error: unknown, agentUrl: string): unknown {
  const own = skillboxErrorIn(error);
  if (own !== undefined) return own;
  if (error instanceof Error && (error.name === "AbortError" || error.name === "TimeoutError")) return error;
  if (error instanceof A2AError) {
    const code = isJsonRpcError(error) ? error.envelopeCode : undefined;
    const status = isRestError(error) ? error.statusCode : undefined;
    return new SkillboxError(
      "UPSTREAM_ERROR",
      `The agent at ${agentUrl} answered with an error (${error.name}${code === undefined ? "" : ` ${code}`}): ${clip(error.message)}`,
      {
        cause: error,
        data: {
          agentUrl,
          reason: error.name,
          ...(code === undefined ? {} : { code }),
          ...(status === undefined ? {} : { status }),
        },
        retryable: code === JSON_RPC_INTERNAL_ERROR || (status !== undefined && status >= 500),
      },
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  const status = Number(
    /Status: (\d{3})\b/.exec(message)?.[1] ?? /Agent Card from \S+: (\d{3})$/.exec(message)?.[1],
  );
  if (Number.isInteger(status)) {
    const hint =
      status === 401 || status === 403
        ? `; the agent wants credentials: set them for its host in ${A2A_ENVIRONMENT.headers}`
        : status === 404
          ? "; check agentUrl (the agent's base URL, or its agent card's URL)"
          : "";
    return new SkillboxError(
      "UPSTREAM_ERROR",
      `The agent at ${agentUrl} answered HTTP ${status}${hint}: ${clip(message)}`,
      {
        cause: error,
        data: { agentUrl, status },
        retryable: status >= 500,
      },
    );
  }
  const network = networkCode(error);
  if (network !== undefined) {
    return new SkillboxError(
      "UPSTREAM_ERROR",
      `Cannot reach the agent at ${agentUrl} (${network}); check that it runs and that agentUrl is right`,
      { cause: error, data: { agentUrl, reason: network }, retryable: true },
    );
  }
  return new SkillboxError(
    "UPSTREAM_ERROR",
    `The agent at ${agentUrl} gave an answer this skill cannot use: ${clip(message)}`,
    {
      cause: error,
      data: { agentUrl },
      retryable: false,
    },
  );
}

/** A Skillbox error thrown by the guarded fetch, possibly wrapped by the SDK or by fetch. */
function skillboxErrorIn(error: unknown): SkillboxError | undefined {
  for (let current = error, depth = 0; current !== undefined && depth < 5; depth++) {
    if (isSkillboxError(current)) return current;
    current = current instanceof Error ? current.cause : undefined;
  }
  return undefined;
}

/** The system error code of a failed fetch (`ECONNREFUSED`, `ENOTFOUND`, …). */
function networkCode(error: unknown): string | undefined {
  if (!(error instanceof TypeError) || error.message !== "fetch failed") return undefined;
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  return typeof cause?.code === "string" ? cause.code : String(cause?.message ?? "network error");
}

function clip(text: string): string {
  return text.length > MAX_DETAIL_LENGTH ? `${text.slice(0, MAX_DETAIL_LENGTH)}…` : text;
}
