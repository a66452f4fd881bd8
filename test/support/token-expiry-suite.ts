import { expect, it } from "vitest";
import { issueToken } from "../../src/server/auth/tokens.js";
import { createServer } from "../../src/server/create-server.js";
import { testEngine, type StoreKind } from "./engines.js";
import { TEST_WORKFLOWS } from "./server.js";

/** API token expiry through the HTTP API, on one store kind (the store keeps `expires_at`). */
export function tokenExpirySuite(kind: StoreKind): void {
  it(`a token past its expiry gets 401 TOKEN_EXPIRED; one without expiry keeps working (${kind})`, async () => {
    const engine = await testEngine(kind, { workflows: TEST_WORKFLOWS });
    const app = createServer(engine, { auth: "tokens" });
    const now = Date.now();
    const root = await issueToken(engine.store, { name: "root", scopes: ["read", "admin"] }, now);
    // Issued an hour ago with a 30 min life: expired. Issued now for 30 days: live.
    const old = await issueToken(engine.store, { name: "old", scopes: ["read"], expiresIn: "30m" }, now - 3_600_000);
    const fresh = await issueToken(engine.store, { name: "fresh", scopes: ["read"], expiresIn: "30d" }, now);
    const get = async (token: string, path = "/runs") => {
      const res = await app.request(path, { headers: { authorization: `Bearer ${token}` } });
      return { status: res.status, body: (await res.json()) as any };
    };
    const expired = await get(old.token);
    expect([expired.status, expired.body.error.code]).toEqual([401, "TOKEN_EXPIRED"]);
    expect(expired.body.error.message).toContain(new Date(now - 1_800_000).toISOString());
    expect((await get(fresh.token)).status).toBe(200);
    expect((await get(root.token)).status).toBe(200);
    const listed = (await get(root.token, "/tokens")).body.tokens as { name: string; expiresAt: string | null }[];
    expect(Object.fromEntries(listed.map((t) => [t.name, t.expiresAt]))).toEqual({
      root: null,
      old: new Date(now - 1_800_000).toISOString(),
      fresh: new Date(now + 30 * 86_400_000).toISOString(),
    });
    // An expired token no longer holds its name: a new "old" may be made.
    expect((await issueToken(engine.store, { name: "old", scopes: ["read"] }, now)).record.expiresAt).toBeNull();
  });
}
