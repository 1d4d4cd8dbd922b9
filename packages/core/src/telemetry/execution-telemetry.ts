import {
  type Attributes,
  type Context,
  context,
  ROOT_CONTEXT,
  SpanKind,
  type Tracer,
} from "@opentelemetry/api";
import type { Skill, SkillExecution } from "../types.js";
import { ExecutionMetrics } from "./execution-metrics.js";
import { ExecutionSpan } from "./execution-span.js";
import { installedTracer } from "./installed-tracer-provider.js";
import type { TelemetryOptions } from "./telemetry-options.js";

/** What an execution's span says about it from the start. */
export interface ExecutionSpanStart {
  skill: Skill;
  executionId: string;
  caller: string;
  sessionId: string | null;
  parentExecutionId: string | null;
  /** The model's id of the tool call (`ExecuteOptions.toolCallId`); else the execution id. */
  toolCallId: string | undefined;
  /** When the span starts, in epoch ms (default: now): a queued run's starts at its submit. */
  startTime?: number;
}

/**
 * The executor's link to OpenTelemetry: the `execute_tool` spans of its executions and its
 * metrics (see {@link ExecutionMetrics}). Everything goes through `@opentelemetry/api`, so an
 * application's SDK gets it all and, with none installed, no span is even made.
 */
export class ExecutionTelemetry {
  /** Undefined when telemetry is off (`telemetry: false`). */
  readonly metrics: ExecutionMetrics | undefined;
  readonly recordInputs: boolean;
  readonly recordOutputs: boolean;
  /** False with `telemetry: false`: no spans, no metrics. */
  readonly enabled: boolean;

  constructor(options: TelemetryOptions | false | undefined) {
    this.enabled = options !== false;
    this.metrics = options === false ? undefined : new ExecutionMetrics();
    this.recordInputs = options !== false && options?.recordInputs === true;
    this.recordOutputs = options !== false && options?.recordOutputs === true;
  }

  /**
   * The context an execution beginning now continues (the caller's active one), or undefined
   * when nothing is traced: telemetry off, or no SDK installed.
   */
  parentContext(): Context | undefined {
    return this.currentTracer() === undefined ? undefined : context.active();
  }

  /** Starts an execution's span under `parent` (the root when undefined); undefined when nothing is traced. */
  start(parent: Context | undefined, start: ExecutionSpanStart): ExecutionSpan | undefined {
    const tracer = this.currentTracer();
    if (tracer === undefined) return undefined;
    const { skill } = start;
    const attributes: Attributes = {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": skill.name,
      "gen_ai.tool.call.id": boundedCallId(start.toolCallId) ?? start.executionId,
      "gen_ai.tool.type": "function",
      "skillbox.execution.id": start.executionId,
      "skillbox.skill.version": skill.version,
      "skillbox.owner": start.caller,
      "skillbox.runtime": skill.runtime,
    };
    if (skill.description !== "") attributes["gen_ai.tool.description"] = skill.description;
    if (start.sessionId !== null) attributes["skillbox.session.id"] = start.sessionId;
    if (start.parentExecutionId !== null)
      attributes["skillbox.parent_execution.id"] = start.parentExecutionId;
    const parentContext = parent ?? ROOT_CONTEXT;
    const span = tracer.startSpan(
      `execute_tool ${skill.name}`,
      {
        kind: SpanKind.INTERNAL,
        attributes,
        ...(start.startTime === undefined ? {} : { startTime: start.startTime }),
      },
      parentContext,
    );
    return new ExecutionSpan(tracer, span, parentContext);
  }

  /**
   * The span of a call an idempotency key answered with the stored execution: nothing ran, and
   * the span says which execution answered (`skillbox.idempotency.replay`).
   */
  replayed(
    parent: Context | undefined,
    execution: SkillExecution,
    skill: Skill,
    toolCallId: string | undefined,
  ): void {
    const span = this.start(parent, {
      skill,
      executionId: execution.id,
      caller: execution.apiKeyId,
      sessionId: execution.sessionId,
      parentExecutionId: execution.parentExecutionId,
      toolCallId,
    });
    if (span === undefined) return;
    span.span.setAttribute("skillbox.idempotency.replay", true);
    if (execution.traceId !== null && execution.spanId !== null)
      span.span.addLink({
        context: { traceId: execution.traceId, spanId: execution.spanId, traceFlags: 1, isRemote: true },
      });
    span.end({ status: execution.status, error: execution.error, attempts: execution.attempts });
  }

  /** The tracer of the installed SDK; undefined when telemetry is off or no SDK is installed. */
  private currentTracer(): Tracer | undefined {
    return this.enabled ? installedTracer("@skillbox/core") : undefined;
  }
}

/** Longest tool call id kept as an attribute: a model's ids are short; a longer one is cut. */
const MAX_CALL_ID = 256;

function boundedCallId(id: string | undefined): string | undefined {
  if (id === undefined || id === "") return undefined;
  return id.length > MAX_CALL_ID ? id.slice(0, MAX_CALL_ID) : id;
}
