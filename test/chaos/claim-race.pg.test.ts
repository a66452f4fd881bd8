/**
 * Two workers racing for the same runnable runs on PostgreSQL: each run is claimed, and each step
 * executed, exactly once (FOR UPDATE SKIP LOCKED), both between worker processes started at the
 * same instant and between two engines (separate pools) hammering `claimRuns` directly.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/engine/create-engine.js";
import type { Engine } from "../../src/engine/engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import type { RunRecord } from "../../src/core/run.js";
import { waitFor } from "../../src/testing/wait-for.js";
import { onCleanup, tempDir } from "../support/engines.js";
import { readLedger } from "../support/invariants.js";
// @ts-expect-error plain JS fixture
import { workflows } from "../fixtures/chaos-workflows.mjs";
import { checkRun } from "./support/checks.js";
import { CHAOS_WORKFLOWS, Cluster } from "./support/cluster.js";
import { chaosSchema } from "./support/pg.js";

async function engineOn(url: string): Promise<Engine> {
  const engine = await createEngine({ store: url, workflows, logger: silentLogger });
  onCleanup(() => engine.close());
  return engine;
}

describe("two workers racing for the same runs", () => {
  it("two worker processes released at the same instant execute each run exactly once", async () => {
    const schema = await chaosSchema();
    const url = schema.url(`${schema.name}_w`);
    const ledger = join(tempDir(), "ledger.txt");
    const engine = await engineOn(url);
    const runIds = Array.from({ length: 120 }, (_, n) => `race-${n}`);
    for (const [n, runId] of runIds.entries()) await engine.start("pair", { n }, { runId });

    // Both load, connect and calibrate first, then start claiming at the same moment.
    const cluster = new Cluster({
      CAIRN_TEST_STORE: url,
      CAIRN_TEST_WORKFLOWS: CHAOS_WORKFLOWS,
      CAIRN_TEST_LEDGER: ledger,
      CAIRN_TEST_LEASE_MS: "10000",
      CAIRN_TEST_CONCURRENCY: "16",
      CAIRN_TEST_POLL_MS: "5",
      CAIRN_TEST_STEP_MS: "5",
      CAIRN_TEST_START_AT: String(Date.now() + 3000),
      CAIRN_TEST_LOG: "warn",
    });
    const ids = await Promise.all([cluster.spawn().ready, cluster.spawn().ready]);
    for (const [n, runId] of runIds.entries()) expect(await engine.result(runId, { timeoutMs: 60_000 })).toBe(n + 1);

    const entries = readLedger(ledger);
    const claimers = new Map<string, number>();
    for (const runId of runIds) {
      const journal = await checkRun(engine, runId, entries);
      const claims = journal.filter((e) => e.kind === "run.claimed");
      expect(claims, `${runId} claimed once`).toHaveLength(1);
      const by = (claims[0]!.data as { workerId: string }).workerId;
      claimers.set(by, (claimers.get(by) ?? 0) + 1);
      for (const step of ["first#0", "second#0"]) expect(entries.get(`${runId}:${step}`), `${runId} ${step} ran once`).toEqual([1]);
    }
    expect([...claimers.keys()].sort(), "both workers won some runs").toEqual([...ids].sort());
    expect((await cluster.stopAll()).filter((e) => e.code !== 0)).toEqual([]);
    // Losing a race is not an error: no claim failed or was retried.
    const complaints = cluster.workers.flatMap((w) => w.output().split("\n")).filter((line) => /"level":"(warn|error)"/.test(line));
    expect(complaints.map((line) => line.slice(0, 300))).toEqual([]);
  });

  it("two engines on separate pools calling claimRuns at once never claim the same run, fresh or with an expired lease", async () => {
    const schema = await chaosSchema();
    const [a, b] = [await engineOn(schema.url(`${schema.name}_a`)), await engineOn(schema.url(`${schema.name}_b`))];
    const runIds = Array.from({ length: 200 }, (_, n) => `claim-${n}`);
    for (const [n, runId] of runIds.entries()) await a.start("pair", { n }, { runId });

    /** Both engines claim in small batches, concurrently, until nothing is left; returns who got what. */
    const race = async (leaseMs: number) => {
      const won = new Map<string, string[]>();
      const claimer = async (engine: Engine, workerId: string) => {
        for (;;) {
          const claimed: RunRecord[] = await engine.store.claimRuns({
            workerId,
            now: Date.now(),
            leaseMs,
            limit: 7,
            workflows: [{ name: "pair", version: "1" }],
          });
          if (claimed.length === 0) return;
          for (const run of claimed) won.set(run.runId, [...(won.get(run.runId) ?? []), workerId]);
        }
      };
      await Promise.all([claimer(a, "A"), claimer(b, "B"), claimer(a, "A2"), claimer(b, "B2")]);
      return won;
    };

    const first = await race(3000);
    expect([...first.keys()].sort()).toEqual([...runIds].sort());
    expect(
      [...first.values()].filter((by) => by.length !== 1),
      "runs claimed twice in one race",
    ).toEqual([]);
    expect(new Set([...first.values()].flat()).size, "every claimer won some").toBe(4);

    // Once those leases expire (by the database clock), the runs are up for grabs again: again one winner each.
    const leasesEnd = Math.max(...(await Promise.all(runIds.map(async (id) => (await a.getRun(id)).leaseExpiresAt!.getTime()))));
    await waitFor(async () => (await a.store.now!()) > leasesEnd, { timeoutMs: 10_000, what: "the first leases expired by the database clock" });
    const second = await race(60_000);
    expect([...second.keys()].sort()).toEqual([...runIds].sort());
    expect(
      [...second.values()].filter((by) => by.length !== 1),
      "runs reclaimed twice",
    ).toEqual([]);
    for (const runId of runIds) {
      const claims = (await a.journal(runId)).filter((e) => e.kind === "run.claimed");
      expect(
        claims.map((e) => [e.epoch, (e.data as { from: string }).from]),
        runId,
      ).toEqual([
        [1, "pending"],
        [2, "running"],
      ]);
    }
  });
});
