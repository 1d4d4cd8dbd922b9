import { type DefinedSkill, defineSkill } from "@skillbox/core/handler";
import { httpRequestInput, httpRequestOutput } from "./lib/http-request-schemas.js";
import {
  type HttpRequestSettings,
  type HttpRequestSettingsOptions,
  readHttpRequestSettings,
  resolveHttpRequestSettings,
} from "./lib/http-request-settings.js";
import { performHttpRequest } from "./lib/perform-http-request.js";

export type { HttpRequestInput, HttpRequestOutput } from "./lib/http-request-schemas.js";
export {
  HTTP_REQUEST_ENVIRONMENT,
  type HttpRequestSettings,
  type HttpRequestSettingsOptions,
  readHttpRequestSettings,
  resolveHttpRequestSettings,
} from "./lib/http-request-settings.js";

/**
 * Creates the `http-request` skill: one HTTP(S) request with a methods allowlist, credential
 * header filtering, a response size cap, capped redirects and an SSRF guard enforced at connect
 * time. With `settings` (validated now; omitted fields take their defaults) the skill ignores the
 * environment; without, it reads the `SKILLBOX_HTTP_*` variables on every call.
 */
export function createHttpRequestSkill(settings?: HttpRequestSettingsOptions): DefinedSkill {
  const fixed: HttpRequestSettings | undefined =
    settings === undefined ? undefined : resolveHttpRequestSettings(settings);
  return defineSkill({
    input: httpRequestInput,
    output: httpRequestOutput,
    timeoutMs: 30_000,
    handler: (input, context) => performHttpRequest(input, fixed ?? readHttpRequestSettings(), context),
  });
}

/** The skill the loader registers, configured from the environment on each call. */
export default createHttpRequestSkill();
