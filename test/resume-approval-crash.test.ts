/**
 * Fresh approval on resume, with a real SIGKILL, on SQLite and PostgreSQL: a worker dies after the
 * step before "wire" (which declares `approval: { onResume: true }`); the worker that recovers the
 * run asks a person before "wire" runs; approved, it runs once. A run nobody killed asks nothing.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine } from "../src/engine/create-engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { waitFor } from "../src/testing/wait-for.js";
import { onCleanup, tempDir } from "./support/engines.js";
import { requireBuild, spawnWorker } from "./support/processes.js";
import { DURABLE_STORES, durableStoreUrl, postgresReachable } from "./support/store-urls.js";
// @ts-expect-error plain JS fixture
import { workflows } from "./fixtures/approval-workflows.mjs";

const FIXTURE = resolve("test/fixtures/approval-workflows.mjs");
const pgUp = await postgresReachable();

function ledger(path: string): string[] {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : [];
}

describe.each(DURABLE_STORES)("fresh approval on resume on %s", (kind) => {
  const test = kind === "postgres" && !pgUp ? it.skip : it;

  test("SIGKILL before the step: the recovering worker asks first; approved, the step runs once", async () => {
    requireBuild();
    const store = durableStoreUrl(kind);
    const path = join(tempDir(), "ledger.txt");
    const engine = await createEngine({ store, workflows, logger: silentLogger });
    onCleanup(() => engine.close());
    const env = { CAIRN_TEST_STORE: store, CAIRN_TEST_WORKFLOWS: FIXTURE, CAIRN_TEST_LEDGER: path, CAIRN_TEST_LEASE_MS: "300" };
    await engine.start("payout", {}, { runId: "killed" });
    const doomed = spawnWorker({ ...env, CAIRN_CRASH_AT: "after-outcome", CAIRN_CRASH_MATCH: "prepare" });
    expect((await doomed.exited).signal).toBe("SIGKILL");
    expect(ledger(path).filter((l) => l.startsWith("wire"))).toEqual([]);

    const worker = spawnWorker(env);
    await worker.ready;
    const request = await waitFor(async () => (await engine.listHumanRequests({ runIdPrefix: "killed", status: "pending" }))[0] ?? false, {
      timeoutMs: 20_000,
      what: "the approval request",
    });
    expect(request.opKey).toBe("approve:wire@0#0");
    expect(request.options).toEqual(["approve", "refuse"]);
    // Nothing ran while the question waited: the run suspends on it.
    await waitFor(async () => (await engine.getRun("killed")).status === "suspended", { timeoutMs: 20_000, what: "the run to suspend" });
    expect(ledger(path).filter((l) => l.startsWith("wire"))).toEqual([]);

    await engine.respondToHuman(request.requestId, { action: "answer", option: "approve", by: "ops" });
    expect(await engine.result("killed", { timeoutMs: 20_000 })).toBe("sent");
    // Once (its intent may have been journaled with prepare's outcome before the kill: then this is attempt 2).
    expect(ledger(path).filter((l) => l.startsWith("wire"))).toHaveLength(1);
    expect(ledger(path).find((l) => l.startsWith("wire"))).toMatch(/^wire killed:wire#0 [12]$/);
    expect(ledger(path).filter((l) => l.startsWith("prepare"))).toHaveLength(1);

    // Without a crash: no question.
    await engine.start("payout", {}, { runId: "calm" });
    expect(await engine.result("calm", { timeoutMs: 20_000 })).toBe("sent");
    expect(await engine.listHumanRequests({ runIdPrefix: "calm" })).toEqual([]);
    worker.child.kill("SIGTERM");
    await worker.exited;
  }, 60_000);
});
