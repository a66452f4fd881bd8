/**
 * Chaos on PostgreSQL: worker processes run multi-step workflows while a seeded nemesis SIGKILLs
 * workers, SIGSTOPs them past their lease, and cuts their database sessions
 * (pg_terminate_backend, only for this test's own application_name, so other test files sharing
 * the server are untouched). Replay a failure with the printed seed: CAIRN_CHAOS_SEED=<seed>.
 *
 * The soak tier (CAIRN_CHAOS_SOAK=1) runs longer, with more runs, and also restarts PostgreSQL in
 * immediate mode — which cuts every session on the server, so run it alone:
 *   CAIRN_CHAOS_SOAK=1 npx vitest run test/chaos/chaos.pg.test.ts
 * The chaos files must not run in parallel with each other when the soak tier is on; the quick
 * tier only touches its own sessions and runs beside anything.
 */
import { describe, it } from "vitest";
import { chaosSchema, restartPostgres } from "./support/pg.js";
import { runChaos, type ChaosPlan } from "./support/scenario.js";

const soak = process.env.CAIRN_CHAOS_SOAK === "1";

async function onPostgres(plan: ChaosPlan, restarts: boolean): Promise<void> {
  const schema = await chaosSchema();
  const workers = `${schema.name}_w`;
  await runChaos(
    {
      // Pools of 4: the quick tier runs beside other PostgreSQL test files on a server with 100
      // connections; with the default 10 per process it took about 55 of them.
      workerUrl: schema.url(workers, { poolSize: "4" }),
      controlUrl: schema.url(`${schema.name}_test`, { poolSize: "4" }),
      sever: () => schema.terminate(workers),
      sessions: () => schema.sessions(workers),
      ...(restarts ? { restart: () => restartPostgres(schema) } : {}),
    },
    plan,
  );
}

describe("chaos on PostgreSQL", () => {
  // Lease 3 s: on a loaded 2-core machine lease renewals (one UPDATE, waiting on the row locks of
  // commits in flight) took 1–4 s, and with 1.5 s live workers kept taking each other's runs while
  // runnable runs waited past the stuck grace (see the README).
  it("quick tier: 180 runs on 4 workers survive kills, pauses past the lease and cut sessions", async () => {
    await onPostgres({ label: "quick", runs: 180, workers: 4, faultMs: 45_000, gap: { minMs: 1000, maxMs: 2000 }, leaseMs: 3000, settleMs: 60_000 }, false);
  }, 240_000);

  it.runIf(soak)(
    "soak tier: 800 runs on 5 workers, also through PostgreSQL restarts",
    async () => {
      await onPostgres({ label: "soak", runs: 800, workers: 5, faultMs: 240_000, gap: { minMs: 1000, maxMs: 3000 }, leaseMs: 2000, settleMs: 180_000 }, true);
    },
    900_000,
  );
});
