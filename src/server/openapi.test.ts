import { describe, expect, it } from "vitest";
import { testEngine } from "../../test/support/engines.js";
import { TEST_WORKFLOWS } from "../../test/support/server.js";
import { createServer } from "./create-server.js";
import { openApiDocument, openApiPath, ROUTES } from "./openapi.js";

type Operation = { responses: Record<string, { description: string }>; security: unknown[] };
const operation = (method: string, path: string) => (openApiDocument().paths as Record<string, Record<string, Operation>>)[openApiPath(path)]![method]!;
const PUBLIC = new Set(["/health", "/openapi.json", "/auth/session", "/webhooks/:name"]);

describe("the OpenAPI description of the guards", () => {
  it("lists 421 on every route, 401 and 403 on every route behind token auth, 403 and 415 on every JSON write, and the security schemes", () => {
    for (const route of ROUTES) {
      const op = operation(route.method, route.path);
      const statuses = Object.keys(op.responses);
      const name = `${route.method} ${route.path}`;
      expect(statuses, name).toContain("421");
      if (!PUBLIC.has(route.path)) expect(statuses, name).toEqual(expect.arrayContaining(["401", "403"]));
      if (route.method === "post" && !route.path.startsWith("/webhooks/")) expect(statuses, name).toEqual(expect.arrayContaining(["403", "415"]));
      expect(op.security, name).toEqual(PUBLIC.has(route.path) ? [] : route.method === "get" ? [{ bearer: [] }, { ticket: [] }] : [{ bearer: [] }]);
    }
    const runs = operation("post", "/runs").responses;
    expect(runs["401"]!.description).toContain("TOKEN_EXPIRED");
    expect(runs["403"]!.description).toContain("CROSS_ORIGIN_REFUSED");
    expect(runs["415"]!.description).toContain("UNSUPPORTED_MEDIA_TYPE");
    expect(runs["421"]!.description).toContain("HOST_NOT_ALLOWED");
    const document = openApiDocument() as { components: { securitySchemes: Record<string, { type: string; in?: string; name?: string }> } };
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    expect(document.components.securitySchemes.ticket).toMatchObject({ type: "apiKey", in: "query", name: "ticket" });
    expect(Object.keys(operation("post", "/auth/tickets").responses)).toEqual(expect.arrayContaining(["201", "401", "403", "415", "421"]));
    expect(Object.keys(operation("post", "/auth/session").responses)).toEqual(expect.arrayContaining(["201", "401", "415", "421"]));
  });

  it("the statuses it lists are the ones the server answers: 421 for a foreign Host, 415 for a non-JSON body, 401 without a token", async () => {
    const engine = await testEngine("memory", { workflows: TEST_WORKFLOWS });
    const app = createServer(engine, { auth: "tokens" });
    const sample = (path: string) => path.replace(/:(\w+)/g, "x");
    for (const route of ROUTES) {
      const name = `${route.method} ${route.path}`;
      const method = route.method.toUpperCase();
      const foreign = await app.request(`http://attacker.example${sample(route.path)}`, { method });
      expect(foreign.status, name).toBe(421);
      if (route.method === "post" && !route.path.startsWith("/webhooks/")) {
        const text = await app.request(sample(route.path), { method, headers: { "content-type": "text/plain" }, body: "{}" });
        expect(text.status, name).toBe(415);
      }
      if (!PUBLIC.has(route.path)) expect((await app.request(sample(route.path), { method })).status, name).toBe(401);
    }
  });
});
