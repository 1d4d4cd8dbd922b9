import { ApiError } from "./api-error.js";
import type {
  CallerView,
  DurationHistogram,
  ExecutionFilters,
  ExecutionPage,
  ExecutionRecord,
  ExecutionTimeline,
  InterceptorView,
  SandboxView,
  SkillView,
} from "./api-types.js";

/** A query string's values; undefined ones are left out, arrays are comma-joined. */
export type QueryValues = Record<string, string | number | boolean | readonly string[] | undefined>;

/** One request of {@link ApiClient.request}. */
export interface ApiRequest {
  method?: "GET" | "POST" | "PATCH" | "DELETE";
  query?: QueryValues;
  /** Sent as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** Options of {@link ApiClient}. */
export interface ApiClientOptions {
  /** Where the API is; default the page's own origin. */
  baseUrl?: string;
  /** The API key to send (`Authorization: Bearer`), read at each request; null sends none. */
  apiKey: () => string | null;
}

/** What executing a skill answered: the record, and whether it is still under way (202). */
export interface ExecuteAnswer {
  execution: ExecutionRecord;
  accepted: boolean;
}

/** Body of `POST /api/skills/:name/execute`. */
export interface ExecuteBody {
  input: unknown;
  version?: string;
  idempotencyKey?: string;
  timeoutMs?: number;
  sessionId?: string;
}

/**
 * The Studio's only way to the server: the public HTTP API, with the tab's API key. Every error
 * answer becomes an {@link ApiError} carrying the server's code and message.
 */
export class ApiClient {
  readonly #baseUrl: string;
  readonly #apiKey: () => string | null;

  constructor(options: ApiClientOptions) {
    this.#baseUrl = options.baseUrl ?? "";
    this.#apiKey = options.apiKey;
  }

  /** The URL of an API path with a query. */
  url(path: string, query: QueryValues = {}): string {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined || value === "") continue;
      search.set(name, Array.isArray(value) ? value.join(",") : String(value));
    }
    const text = search.toString();
    return `${this.#baseUrl}${path}${text === "" ? "" : `?${text}`}`;
  }

  /** The headers every request carries (the key, when there is one). */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    const key = this.#apiKey();
    return key === null ? { ...extra } : { ...extra, authorization: `Bearer ${key}` };
  }

  /** Sends one request and reads its JSON answer (null for 204). */
  async request<T>(path: string, request: ApiRequest = {}): Promise<T> {
    const response = await this.send(path, request);
    if (response.status === 204) return null as T;
    return jsonOf<T>(response, `${request.method ?? "GET"} ${path}`, request.signal);
  }

  /** Sends one request; resolves with a 2xx response, else throws its {@link ApiError}. */
  async send(path: string, request: ApiRequest = {}): Promise<Response> {
    const headers = this.headers(request.headers);
    if (request.body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      response = await fetch(this.url(path, request.query), {
        method: request.method ?? "GET",
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal: request.signal,
      });
    } catch (error) {
      if (request.signal?.aborted) throw error;
      throw networkError(error);
    }
    if (!response.ok) throw await errorOf(response);
    return response;
  }

  /** `GET /api/caller`: the owner the key acts as, and whether it may approve. */
  caller(signal?: AbortSignal): Promise<CallerView> {
    return this.request("/api/caller", { signal });
  }

  /** `GET /api/skills`: the latest version of each skill (`versions: "all"`: every version). */
  async listSkills(
    options: { stats?: boolean; versions?: "all"; signal?: AbortSignal } = {},
  ): Promise<SkillView[]> {
    const answer = await this.request<{ skills: SkillView[] }>("/api/skills", {
      query: { stats: options.stats === true ? "1" : undefined, versions: options.versions },
      signal: options.signal,
    });
    return answer.skills;
  }

  /** `GET /api/skills/:name`: every version of one skill the caller can see. */
  async skillVersions(name: string, signal?: AbortSignal): Promise<SkillView[]> {
    const answer = await this.request<{ skills: SkillView[] }>(`/api/skills/${encodeURIComponent(name)}`, {
      signal,
    });
    return answer.skills;
  }

  /** `PATCH /api/skills/:id`: enables or disables one version (the caller's own skills only). */
  setSkillEnabled(id: string, enabled: boolean): Promise<SkillView> {
    return this.request(`/api/skills/${encodeURIComponent(id)}`, { method: "PATCH", body: { enabled } });
  }

  /**
   * `POST /api/skills/:name/execute`. With `respondAsync`, the execution is queued and the answer
   * comes at once (202, `accepted`); an execution that awaits approval is `accepted` either way.
   */
  async executeSkill(
    name: string,
    body: ExecuteBody,
    options: { respondAsync?: boolean; signal?: AbortSignal } = {},
  ): Promise<ExecuteAnswer> {
    const response = await this.send(`/api/skills/${encodeURIComponent(name)}/execute`, {
      method: "POST",
      body,
      headers: options.respondAsync === true ? { prefer: "respond-async" } : {},
      signal: options.signal,
    });
    const execution = await jsonOf<ExecutionRecord>(
      response,
      `POST /api/skills/${encodeURIComponent(name)}/execute`,
      options.signal,
    );
    return { execution, accepted: response.status === 202 };
  }

  /** `GET /api/executions`: one page of the caller's executions, newest first. */
  listExecutions(filters: ExecutionFilters = {}, signal?: AbortSignal): Promise<ExecutionPage> {
    const { status, ...rest } = filters;
    return this.request("/api/executions", {
      query: { ...rest, status: typeof status === "string" ? status : status?.join(",") },
      signal,
    });
  }

  /** `GET /api/executions/:id`: the full record. */
  getExecution(id: string, signal?: AbortSignal): Promise<ExecutionRecord> {
    return this.request(`/api/executions/${encodeURIComponent(id)}`, { signal });
  }

  /** `POST /api/executions/:id/cancel`. */
  cancelExecution(id: string, reason?: string): Promise<ExecutionRecord> {
    return this.request(`/api/executions/${encodeURIComponent(id)}/cancel`, {
      method: "POST",
      body: reason === undefined ? {} : { reason },
    });
  }

  /** `POST /api/executions/:id/approve` (approver callers only); `input` replaces the input. */
  approveExecution(
    id: string,
    decision: { input?: unknown; comment?: string } = {},
  ): Promise<ExecutionRecord> {
    return this.request(`/api/executions/${encodeURIComponent(id)}/approve`, {
      method: "POST",
      body: decision,
    });
  }

  /** `POST /api/executions/:id/reject` (approver callers only). */
  rejectExecution(id: string, reason?: string): Promise<ExecutionRecord> {
    return this.request(`/api/executions/${encodeURIComponent(id)}/reject`, {
      method: "POST",
      body: reason === undefined ? {} : { reason },
    });
  }

  /** `GET /api/interceptors`: the active interceptors in `before` order. */
  async listInterceptors(signal?: AbortSignal): Promise<InterceptorView[]> {
    const answer = await this.request<{ interceptors: InterceptorView[] }>("/api/interceptors", { signal });
    return answer.interceptors;
  }

  /** `GET /api/sandbox`: the runtimes and their pools. */
  sandbox(signal?: AbortSignal): Promise<SandboxView> {
    return this.request("/api/sandbox", { signal });
  }

  /** `GET /api/stats/executions`: executions per time bucket, by status. */
  executionTimeline(
    query: { since?: string; until?: string; bucketSeconds?: number; skill?: string } = {},
    signal?: AbortSignal,
  ): Promise<ExecutionTimeline> {
    return this.request("/api/stats/executions", { query, signal });
  }

  /** `GET /api/stats/durations`: duration distribution of each skill's finished executions. */
  durationHistogram(
    query: { skill?: string; since?: string; window?: number } = {},
    signal?: AbortSignal,
  ): Promise<DurationHistogram> {
    return this.request("/api/stats/durations", { query, signal });
  }
}

function networkError(cause: unknown): ApiError {
  return new ApiError({
    status: 0,
    code: "NETWORK_ERROR",
    message: `The Skillbox server did not answer (${cause instanceof Error ? cause.message : String(cause)}); is it still running?`,
  });
}

/**
 * The JSON body of a 2xx answer. One the Studio cannot read (cut off, a proxy's HTML page) is an
 * {@link ApiError} too, so the view shows it instead of waiting for ever.
 */
async function jsonOf<T>(response: Response, request: string, signal: AbortSignal | undefined): Promise<T> {
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if (signal?.aborted) throw error;
    throw networkError(error);
  }
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new ApiError({
      status: response.status,
      code: "BAD_RESPONSE",
      message: `The answer to ${request} is not the API's JSON (${error instanceof Error ? error.message : String(error)}): ${text.slice(0, 200)}`,
    });
  }
}

/** The {@link ApiError} of a non-2xx answer, whatever its body. */
async function errorOf(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => "");
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; data?: unknown } };
    const error = body.error;
    if (error !== undefined && typeof error.code === "string" && typeof error.message === "string") {
      return new ApiError({
        status: response.status,
        code: error.code,
        message: error.message,
        data: error.data,
      });
    }
  } catch {
    // Not the API's error shape: described below.
  }
  return new ApiError({
    status: response.status,
    code: `HTTP_${response.status}`,
    message: `The server answered ${response.status} ${response.statusText}${text === "" ? "" : `: ${text.slice(0, 200)}`}`,
  });
}
