import { describe, expect, it } from "vitest";
import { echoSkill, useTestApi } from "./http-test-api.js";

const startApi = useTestApi();

describe("createHttpApp: GET /health", () => {
  it("answers without authentication with the number of registered skill versions", async () => {
    const api = await startApi({ apiKeys: { "alice-key": "alice" } });
    api.host.registry.register(echoSkill());
    api.host.registry.register(echoSkill({ version: "2.0.0" }));
    api.host.registry.register(echoSkill({ name: "private", apiKeyId: "alice" }));
    const response = await api.call("GET", "/health");
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: "ok", skills: 3 });
  });
});
