import { context, propagation, ROOT_CONTEXT } from "@opentelemetry/api";
import { expectTraceparentOf, useRecordingTelemetry } from "@skillbox/test-helpers/telemetry";
import { describe, expect, it } from "vitest";
import { useHttpRequestTestBed } from "./helpers/http-request-test-bed.js";

const { serve, hostWith, request } = useHttpRequestTestBed({ settings: { allowPrivate: ["127.0.0.1"] } });

const CALLER_TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

// First, while no SDK is installed: the file installs it once, below, and never removes it early.
describe("http-request without an OpenTelemetry SDK", () => {
  it("sends no trace headers", async () => {
    const server = await serve();
    const execution = await request(hostWith(), { url: server.origin });
    expect(execution.status).toBe("success");
    expect(execution.traceId).toBeNull();
    expect(server.requests[0]?.headers.traceparent).toBeUndefined();
    expect(server.requests[0]?.headers.tracestate).toBeUndefined();
  });
});

describe("http-request with an OpenTelemetry SDK", () => {
  const telemetry = useRecordingTelemetry();

  it("sends the traceparent of the attempt that made the request", async () => {
    const server = await serve();
    const execution = await request(hostWith(), { url: server.origin });
    expect(execution.status).toBe("success");
    const chain = expectTraceparentOf(telemetry, execution, server.requests[0]?.headers.traceparent);
    expect(chain).toEqual(["attempt 1", "execute_tool http-request"]);
  });

  it("continues the caller's trace, tracestate included", async () => {
    const server = await serve();
    const parent = propagation.extract(ROOT_CONTEXT, {
      traceparent: CALLER_TRACEPARENT,
      tracestate: "vendor=opaque",
    });
    const execution = await context.with(parent, () => request(hostWith(), { url: server.origin }));
    expect(execution.traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expectTraceparentOf(telemetry, execution, server.requests[0]?.headers.traceparent);
    expect(server.requests[0]?.headers.tracestate).toBe("vendor=opaque");
  });

  it("keeps a traceparent the input sets, whatever its case, with the input's tracestate", async () => {
    const server = await serve();
    const execution = await request(hostWith(), {
      url: server.origin,
      headers: { TraceParent: CALLER_TRACEPARENT, TraceState: "mine=1" },
    });
    expect(execution.traceId).not.toBeNull();
    expect(server.requests[0]?.headers.traceparent).toBe(CALLER_TRACEPARENT);
    expect(server.requests[0]?.headers.tracestate).toBe("mine=1");
  });

  it("sends the trace headers on every redirect hop, to other origins too", async () => {
    const target = await serve();
    const origin = await serve((_request, response) => {
      response.writeHead(302, { location: `${target.origin}/landed` }).end();
    });
    const execution = await request(hostWith({ forwardHeaders: ["authorization"] }), {
      url: origin.origin,
      headers: { authorization: "Bearer for-the-first-origin-only" },
    });
    expect(execution.output.redirects).toEqual([`${target.origin}/landed`]);
    const first = origin.requests[0]?.headers;
    const second = target.requests[0]?.headers;
    expectTraceparentOf(telemetry, execution, first?.traceparent);
    expect(second?.traceparent).toBe(first?.traceparent);
    expect(second?.authorization).toBeUndefined();
  });
});
