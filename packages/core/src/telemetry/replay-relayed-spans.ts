import { type Context, type Span, type Tracer, trace } from "@opentelemetry/api";
import { withIdHint } from "./skillbox-id-generator.js";
import type { RelayedSpan } from "./span-relay.js";

/**
 * Replays spans a worker thread or a sandbox relayed as spans of `tracer` (the host's SDK), under
 * `parent` (the `worker dispatch` / `sandbox run` span's context): parents before children, with
 * their kind, attributes, links, start and end times, events and status. Each span asks for its
 * relayed id ({@link withIdHint}), which a `createSkillboxIdGenerator()` SDK hands out; with
 * another generator it gets a new id, and its children are still replayed under it.
 */
export function replayRelayedSpans(tracer: Tracer, spans: readonly RelayedSpan[], parent: Context): void {
  if (spans.length === 0) return;
  const byId = new Map<string, RelayedSpan>();
  for (const span of spans) byId.set(span.spanId, span);
  /** The replayed span's context by relayed span id. */
  const replayed = new Map<string, Context>();
  const visiting = new Set<string>();

  const replay = (relayed: RelayedSpan): Context => {
    const done = replayed.get(relayed.spanId);
    if (done !== undefined) return done;
    visiting.add(relayed.spanId);
    const parentId = relayed.parentSpanId;
    // A parent that did not come back (dropped, or still open) leaves its children under `parent`.
    const under =
      parentId !== undefined && byId.has(parentId) && !visiting.has(parentId)
        ? replay(byId.get(parentId) as RelayedSpan)
        : parent;
    const span: Span = withIdHint({ traceId: relayed.traceId, spanId: relayed.spanId }, () =>
      tracer.startSpan(
        relayed.name,
        {
          kind: relayed.kind,
          attributes: relayed.attributes,
          startTime: relayed.startTime,
          ...(relayed.links === undefined
            ? {}
            : {
                links: relayed.links.map((link) => ({
                  context: { traceId: link.traceId, spanId: link.spanId, traceFlags: link.traceFlags },
                  ...(link.attributes === undefined ? {} : { attributes: link.attributes }),
                })),
              }),
        },
        under,
      ),
    );
    for (const event of relayed.events) span.addEvent(event.name, event.attributes, event.time);
    if (relayed.status.code !== 0) span.setStatus(relayed.status);
    span.end(relayed.endTime);
    const context = trace.setSpan(under, span);
    replayed.set(relayed.spanId, context);
    visiting.delete(relayed.spanId);
    return context;
  };

  for (const span of spans) replay(span);
}
