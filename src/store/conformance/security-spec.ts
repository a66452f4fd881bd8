import { describe, expect, it } from "vitest";
import type { Store, TokenRecord } from "../../core/store.js";
import { T0 } from "./harness.js";

const token = (id: string, extra: Partial<TokenRecord> = {}): TokenRecord => ({
  id,
  name: `name-${id}`,
  hash: "ab".repeat(32),
  scopes: ["read"],
  namespace: null,
  createdAt: T0,
  revokedAt: null,
  expiresAt: null,
  ...extra,
});

/** API tokens and the audit log (migration 0004). */
export function securitySpec(store: () => Store): void {
  describe("tokens", () => {
    it("creates, gets, lists newest first, and refuses a duplicate id", async () => {
      await store().createToken(token("t1", { scopes: ["read", "write"], namespace: "team-a" }));
      await store().createToken(token("t2", { createdAt: T0 + 5, scopes: ["admin"] }));
      expect(await store().getToken("t1")).toEqual(token("t1", { scopes: ["read", "write"], namespace: "team-a" }));
      expect(await store().getToken("ghost")).toBeUndefined();
      expect((await store().listTokens()).map((t) => t.id)).toEqual(["t2", "t1"]);
      await expect(store().createToken(token("t1", { name: "other" }))).rejects.toThrow();
      expect((await store().getToken("t1"))!.name).toBe("name-t1");
    });

    it("revokes once: revokedAt is set, a second revoke or an unknown id changes nothing", async () => {
      await store().createToken(token("t1"));
      expect(await store().revokeToken("t1", T0 + 10)).toBe(true);
      expect(await store().revokeToken("t1", T0 + 20)).toBe(false);
      expect(await store().revokeToken("ghost", T0 + 20)).toBe(false);
      expect((await store().getToken("t1"))!.revokedAt).toBe(T0 + 10);
      expect((await store().listTokens())[0]!.revokedAt).toBe(T0 + 10);
    });

    it("keeps a token's expiry (null for never)", async () => {
      await store().createToken(token("t1", { expiresAt: T0 + 30 * 86_400_000 }));
      await store().createToken(token("t2", { createdAt: T0 + 1 }));
      expect((await store().getToken("t1"))!.expiresAt).toBe(T0 + 30 * 86_400_000);
      expect((await store().getToken("t2"))!.expiresAt).toBeNull();
      expect((await store().listTokens()).map((t) => t.expiresAt)).toEqual([null, T0 + 30 * 86_400_000]);
    });
  });

  describe("audit log", () => {
    it("appends with increasing ids and lists newest first, filtered and paged by id", async () => {
      const a = await store().appendAudit({ at: T0, actor: "token:ops", action: "run.start", target: "r1", detail: { workflow: "wf" } });
      const b = await store().appendAudit({ at: T0 + 1, actor: "cli:ann", action: "run.cancel", target: "r1", detail: null });
      const c = await store().appendAudit({ at: T0 + 2, actor: "token:ops", action: "token.create", target: "t9", detail: { scopes: ["read"] } });
      expect(a).toEqual({ id: a.id, at: T0, actor: "token:ops", action: "run.start", target: "r1", detail: { workflow: "wf" } });
      expect(b.id).toBeGreaterThan(a.id);
      expect(c.id).toBeGreaterThan(b.id);
      expect(await store().listAudit({})).toEqual([c, b, a]);
      expect(await store().listAudit({ limit: 2 })).toEqual([c, b]);
      expect(await store().listAudit({ beforeId: b.id })).toEqual([a]);
      expect(await store().listAudit({ target: "r1" })).toEqual([b, a]);
      expect(await store().listAudit({ actor: "token:ops", action: "token.create" })).toEqual([c]);
      expect(await store().listAudit({ action: "nothing" })).toEqual([]);
    });
  });
}
