import { describe, expect, it } from "vitest";
import { echoSkill, useTestApi } from "./http-test-api.js";

const startApi = useTestApi();
const MIB = 1024 * 1024;
const BIG_ROWS = 260;
/** What a page of 260 previews must stay under; the full page would be over 520 MiB. */
const PAGE_BOUND_BYTES = MIB;

describe("createHttpApp: GET /api/executions over big rows", () => {
  it("lists bounded previews of 1 MiB inputs and outputs; the full record stays at /:id", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());
    const big = "x".repeat(MIB);
    for (let index = 0; index < BIG_ROWS; index++) {
      const execution = await api.host.executor.execute("echo", { msg: `${index}:${big}` });
      expect(execution.status).toBe("success");
    }

    const response = await fetch(`${api.server.url}/api/executions?limit=${BIG_ROWS}`);
    const text = await response.text();

    expect(response.status).toBe(200);
    expect(Buffer.byteLength(text)).toBeLessThan(PAGE_BOUND_BYTES);
    const page = JSON.parse(text);
    expect(page).toMatchObject({ total: BIG_ROWS, limit: BIG_ROWS, offset: 0, nextOffset: null });
    expect(page.executions).toHaveLength(BIG_ROWS);
    for (const summary of page.executions) {
      expect(summary).not.toHaveProperty("input");
      expect(summary).not.toHaveProperty("output");
      expect(summary.inputPreview.truncated).toBe(true);
      expect(summary.inputPreview.bytes).toBeGreaterThan(MIB);
      expect(summary.inputPreview.text.startsWith('{"msg":"')).toBe(true);
      expect(summary.outputPreview).toMatchObject({ truncated: true });
      expect(summary.outputPreview.bytes).toBeGreaterThan(MIB);
    }

    const newest = page.executions[0];
    const full = await api.call("GET", `/api/executions/${newest.id}`);
    expect(full.status).toBe(200);
    expect(full.body.input.msg).toBe(`${BIG_ROWS - 1}:${big}`);
    expect(full.body.output.echoed).toBe(`${BIG_ROWS - 1}:${big}`);
  }, 120_000);

  it("ends a page at 1 MiB and says where the next starts (nextOffset)", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());
    const rows = 500;
    for (let index = 0; index < rows; index++) {
      await api.host.executor.execute("echo", { msg: `${index}:${"m".repeat(1500)}` });
    }

    const seen: string[] = [];
    let offset: number | null = 0;
    let pages = 0;
    while (offset !== null) {
      const response = await fetch(`${api.server.url}/api/executions?limit=1000&offset=${offset}`);
      const text = await response.text();
      expect(Buffer.byteLength(text)).toBeLessThan(PAGE_BOUND_BYTES);
      const page = JSON.parse(text);
      expect(page.total).toBe(rows);
      seen.push(...page.executions.map((summary: { id: string }) => summary.id));
      offset = page.nextOffset;
      pages++;
    }

    expect(pages).toBe(2);
    expect(new Set(seen).size).toBe(rows);
  });

  it("shows small bodies whole in the preview, marked not truncated", async () => {
    const api = await startApi();
    api.host.registry.register(echoSkill());
    await api.host.executor.execute("echo", { msg: "héllo" });

    const page = await api.call("GET", "/api/executions");

    expect(page.body.executions[0]).toMatchObject({
      inputPreview: {
        text: '{"msg":"héllo"}',
        bytes: Buffer.byteLength('{"msg":"héllo"}'),
        truncated: false,
      },
      outputPreview: { text: '{"echoed":"héllo"}', truncated: false },
      status: "success",
    });
  });
});
