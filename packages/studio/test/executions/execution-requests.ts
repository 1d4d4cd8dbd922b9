import type { StudioHost } from "../helpers/studio-host.js";

/** An execution record as the HTTP API answers it (the fields these tests read). */
export interface ExecutionAnswer {
  id: string;
  skillName: string;
  status: string;
  attempts: number;
  input: unknown;
  output: unknown;
  error: { code: string; message: string } | null;
  parentExecutionId: string | null;
  approval: { reason: string; decision: string | null } | null;
}

/** Options of {@link runSkill}. */
export interface RunSkillOptions {
  input?: unknown;
  sessionId?: string;
  /** `Prefer: respond-async`: answered at once (202), the execution runs in the background. */
  respondAsync?: boolean;
  apiKey?: string;
}

function headers(apiKey: string | undefined): Record<string, string> {
  return {
    "content-type": "application/json",
    ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }),
  };
}

/** Runs a skill over the HTTP API, as any client would; resolves with the status and the record. */
export async function runSkill(
  host: StudioHost,
  name: string,
  options: RunSkillOptions = {},
): Promise<{ status: number; execution: ExecutionAnswer }> {
  const response = await fetch(`${host.url}/api/skills/${encodeURIComponent(name)}/execute`, {
    method: "POST",
    headers: {
      ...headers(options.apiKey),
      ...(options.respondAsync === true ? { prefer: "respond-async" } : {}),
    },
    body: JSON.stringify({
      input: options.input ?? {},
      ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
    }),
  });
  const body = (await response.json()) as ExecutionAnswer & { error?: unknown };
  if (response.status >= 400) {
    throw new Error(`POST execute ${name} answered ${response.status}: ${JSON.stringify(body)}`);
  }
  return { status: response.status, execution: body };
}

/** `GET /api/executions/:id`, waiting up to `waitSeconds` for it to end (or await approval). */
export async function readExecution(
  host: StudioHost,
  id: string,
  options: { waitSeconds?: number; apiKey?: string } = {},
): Promise<ExecutionAnswer> {
  const wait = options.waitSeconds === undefined ? "" : `?wait=${options.waitSeconds}`;
  const response = await fetch(`${host.url}/api/executions/${id}${wait}`, {
    headers: headers(options.apiKey),
  });
  if (!response.ok)
    throw new Error(`GET execution ${id} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as ExecutionAnswer;
}

/** `POST /api/executions/:id/<action>`; resolves with the status and the JSON answer. */
export async function decide(
  host: StudioHost,
  id: string,
  action: "approve" | "reject" | "cancel",
  options: { apiKey?: string; body?: Record<string, unknown> } = {},
): Promise<{
  status: number;
  body: { error?: { code: string; message: string } } & Partial<ExecutionAnswer>;
}> {
  const response = await fetch(`${host.url}/api/executions/${id}/${action}`, {
    method: "POST",
    headers: headers(options.apiKey),
    body: JSON.stringify(options.body ?? {}),
  });
  return { status: response.status, body: (await response.json()) as never };
}
