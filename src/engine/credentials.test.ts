/**
 * Credentials (`ctx.credential`, `createEngine({ credentials })`) on SQLite and PostgreSQL: resolved
 * at each use (a rotation between two uses gives the second the new value), never journaled (the
 * SQLite file's bytes and every journal payload are searched for the secret), each use audited
 * with run, op and scope, revoked once when the run completes, fails or is cancelled (the provider's
 * hook called once; a later use is refused with CREDENTIAL_REVOKED). The env provider is checked too.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { onCleanup, tempDir } from "../../test/support/engines.js";
import { DURABLE_STORES, durableStoreUrl, postgresReachable, type DurableStore } from "../../test/support/store-urls.js";
import { waitFor } from "../testing/wait-for.js";
import { createEngine } from "./create-engine.js";
import { envCredential, fileCredential, type CredentialProvider } from "./credentials.js";
import { defineWorkflow } from "./define-workflow.js";
import type { Engine } from "./engine.js";
import { silentLogger } from "./logger.js";

const pgUp = await postgresReachable();
const fast = { pollInterval: 10 };

/** Uses "vault" twice with a rotation between, and "ci" (from a file) once; fails when asked to. */
const deploy = defineWorkflow({
  name: "deploy",
  async run(ctx, input: { fail?: boolean; wait?: boolean }) {
    const first = await ctx.step("push", async () => (await ctx.credential("vault", { scope: "repo:write" })).length);
    await ctx.step("rotate", () => void rotate());
    const second = await ctx.step("tag", async () => (await ctx.credential("vault", { scope: "repo:write" })) === "s3cret-v2-ROTATED");
    const ci = await ctx.step("ci", async () => (await ctx.credential("ci")).startsWith("ci-token") && (await ctx.credential("env")) === "env-token-ENVVALUE");
    if (input.wait) await ctx.waitForEvent("go");
    if (input.fail) {
      await ctx.step("boom", async () => {
        await ctx.credential("vault", { scope: "cleanup" });
        throw Object.assign(new Error("boom"), { nonRetryable: true });
      });
    }
    return { first, second, ci };
  },
});

let version = "s3cret-v1-ORIGINAL";
const rotate = () => void (version = "s3cret-v2-ROTATED");

async function setUp(kind: DurableStore) {
  version = "s3cret-v1-ORIGINAL";
  const revoked: string[] = [];
  const vault: CredentialProvider = { resolve: () => version, revoke: ({ runId, name }) => void revoked.push(`${name} ${runId}`) };
  const file = join(tempDir(), "ci-token");
  writeFileSync(file, "ci-token-FILEVALUE\n");
  process.env.CAIRN_TEST_ENV_CRED = "env-token-ENVVALUE";
  const url = durableStoreUrl(kind);
  const engine: Engine = await createEngine({
    store: url,
    workflows: [deploy],
    logger: silentLogger,
    credentials: { vault, ci: fileCredential(file), env: envCredential("CAIRN_TEST_ENV_CRED") },
  });
  onCleanup(() => engine.close());
  const worker = engine.startWorker(fast);
  onCleanup(() => worker.stop());
  return { engine, revoked, url };
}

describe.each(DURABLE_STORES)("credentials on %s", (kind) => {
  const test = kind === "postgres" && !pgUp ? it.skip : it;

  test("resolved at each use (rotation), audited, never journaled, revoked once when the run completes", async () => {
    const { engine, revoked, url } = await setUp(kind);
    await engine.start(deploy, {}, { runId: "ok" });
    expect(await engine.result("ok", { timeoutMs: 20_000 })).toEqual({ first: "s3cret-v1-ORIGINAL".length, second: true, ci: true });
    // Each use audited with run, op and scope.
    const uses = await engine.store.listAudit({ action: "credential.use", target: "ok" });
    expect(uses.map((u) => u.detail).reverse()).toEqual([
      { credential: "vault", opKey: "credential:vault#0", scope: "repo:write" },
      { credential: "vault", opKey: "credential:vault#1", scope: "repo:write" },
      { credential: "ci", opKey: "credential:ci#0", scope: null },
      { credential: "env", opKey: "credential:env#0", scope: null },
    ]);
    // The vault's hook is called once; the file provider has none, but its revocation is recorded too.
    await waitFor(async () => (await engine.store.listAudit({ action: "credential.revoke", target: "ok" })).length === 3, {
      timeoutMs: 10_000,
      what: "the revocations",
    });
    expect(revoked).toEqual(["vault ok"]);
    // Never in the journal, in clear: no payload holds it, nor the database file's bytes.
    const payloads = (await engine.store.readJournal("ok")).map((e) => e.payload).join("\n");
    for (const secret of ["s3cret-v1-ORIGINAL", "s3cret-v2-ROTATED", "ci-token-FILEVALUE", "env-token-ENVVALUE"]) expect(payloads).not.toContain(secret);
    if (kind === "sqlite") {
      const path = url.slice("sqlite:".length);
      for (const file of [path, `${path}-wal`]) {
        if (!existsSync(file)) continue;
        const bytes = readFileSync(file);
        for (const secret of ["s3cret-v1-ORIGINAL", "s3cret-v2-ROTATED", "ci-token-FILEVALUE", "env-token-ENVVALUE"])
          expect(bytes.includes(secret), `${secret} in ${file}`).toBe(false);
      }
    }
  });

  test("revoked once when the run fails; the retried run's next use is refused with CREDENTIAL_REVOKED", async () => {
    const { engine, revoked } = await setUp(kind);
    await engine.start(deploy, { fail: true }, { runId: "bad" });
    await expect(engine.result("bad", { timeoutMs: 20_000 })).rejects.toThrow(/boom/);
    await waitFor(async () => (await engine.store.listAudit({ action: "credential.revoke", target: "bad" })).length === 3, {
      timeoutMs: 10_000,
      what: "the revocations",
    });
    // The retry replays the journaled steps (no use) and runs "boom" again: its use is refused.
    await engine.retry("bad");
    await expect(engine.result("bad", { timeoutMs: 20_000 })).rejects.toThrow(/revoked for run "bad"/);
    expect((await engine.journal("bad")).some((e) => e.kind === "step.failed" && JSON.stringify(e.data).includes("CREDENTIAL_REVOKED"))).toBe(true);
    expect(revoked).toEqual(["vault bad"]);
    expect(await engine.store.listAudit({ action: "credential.revoke", target: "bad" })).toHaveLength(3);
  });

  test("revoked when the run is cancelled; a use after that is refused", async () => {
    const { engine, revoked } = await setUp(kind);
    await engine.start(deploy, { wait: true }, { runId: "cancelled" });
    await waitFor(async () => (await engine.getRun("cancelled")).status === "suspended", { timeoutMs: 20_000, what: "suspended" });
    await engine.cancel("cancelled", "no longer needed");
    await waitFor(() => revoked.length === 1, { timeoutMs: 10_000, what: "the revocation" });
    expect(revoked).toEqual(["vault cancelled"]);
    // A use after revocation (a late step of that run) is refused with a clear code.
    const { CredentialBroker } = await import("./credentials.js");
    const broker = new CredentialBroker(new Map([["vault", { resolve: () => "x" }]]), engine.store, Date.now, silentLogger);
    await expect(broker.use({ name: "vault", runId: "cancelled", opKey: "credential:vault#9", scope: null })).rejects.toMatchObject({
      code: "CREDENTIAL_REVOKED",
    });
  });
});
