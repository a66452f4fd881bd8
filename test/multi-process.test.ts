/**
 * Several processes on one SQLite file: racing idempotent starts, and a paused worker
 * (SIGSTOP past its lease) that must write nothing once another worker took the run over.
 */
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { createEngine } from "../src/engine/create-engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { waitFor } from "../src/testing/wait-for.js";
import { onCleanup, tempDir } from "./support/engines.js";
import { checkRunInvariants, readLedger } from "./support/invariants.js";
import { requireBuild, spawnWorker } from "./support/processes.js";
// @ts-expect-error plain JS fixture
import { expectedOutput, workflows } from "./fixtures/crash-workflows.mjs";

const run = promisify(execFile);

/** A fresh SQLite file with the fixture workflows, an engine on it, and the env worker processes need. */
async function fixtureStore(extra: Record<string, string>) {
  requireBuild();
  const dir = tempDir();
  const store = `sqlite:${join(dir, "cairn.db")}`;
  const ledger = join(dir, "ledger.txt");
  const engine = await createEngine({ store, workflows, logger: silentLogger });
  onCleanup(() => engine.close());
  const env = { CAIRN_TEST_STORE: store, CAIRN_TEST_WORKFLOWS: resolve("test/fixtures/crash-workflows.mjs"), CAIRN_TEST_LEDGER: ledger, ...extra };
  return { engine, env, ledger };
}

describe("several processes on one SQLite file", () => {
  it("20 racing starts of one runId from 4 processes create it once; a different input conflicts", async () => {
    requireBuild();
    const store = `sqlite:${join(tempDir(), "cairn.db")}`;
    const engine = await createEngine({ store, logger: silentLogger });
    onCleanup(() => engine.close());
    const env = { ...process.env, CAIRN_TEST_STORE: store, CAIRN_TEST_START_AT: String(Date.now() + 1500) };
    const starter = resolve("test/fixtures/starter.mjs");
    const outputs = await Promise.all([
      run(process.execPath, [starter, "shared", '{"v":1}', "5"], { env }),
      run(process.execPath, [starter, "shared", '{"v":1}', "5"], { env }),
      run(process.execPath, [starter, "shared", '{"v":1}', "5"], { env }),
      run(process.execPath, [starter, "shared", '{"v":2}', "5"], { env }),
    ]);
    const results = outputs.flatMap((o) =>
      o.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { created?: boolean; error?: string }),
    );
    expect(results).toHaveLength(20);
    const created = results.filter((r) => r.created === true).length;
    const existing = results.filter((r) => r.created === false).length;
    const conflicts = results.filter((r) => r.error === "RUN_CONFLICT").length;
    expect(created).toBe(1);
    expect(created + existing + conflicts).toBe(20);
    const input = ((await engine.getRun("shared")).input as { v: number }).v;
    // Whichever input won, every caller with the other input got a conflict.
    expect(conflicts).toBe(input === 1 ? 5 : 15);
    expect(await engine.journal("shared")).toHaveLength(1);
  });

  it("a paused worker (SIGSTOP past its lease, then SIGCONT) writes nothing after another worker took over", async () => {
    const { engine, env, ledger } = await fixtureStore({ CAIRN_TEST_LEASE_MS: "400" });
    await engine.start("slowpoke", undefined, { runId: "paused" });

    // A sends no heartbeats, so nothing but the epoch check on its writes can stop it.
    const a = spawnWorker({ ...env, CAIRN_TEST_STEP_MS: "1500", CAIRN_TEST_HEARTBEAT_MS: "600000" });
    await waitFor(async () => (await engine.journal("paused")).some((e) => e.kind === "step.started"), { what: "A started the slow step" });
    a.child.kill("SIGSTOP");
    const epochA = (await engine.getRun("paused")).leaseEpoch;

    const b = spawnWorker({ ...env, CAIRN_TEST_STEP_MS: "0" });
    await waitFor(async () => (await engine.getRun("paused")).waitingFor.some((w) => w.kind === "event"), {
      timeoutMs: 20_000,
      what: "B took over and waits for go",
    });
    const epochB = (await engine.getRun("paused")).leaseEpoch;
    expect(epochB).toBeGreaterThan(epochA);

    a.child.kill("SIGCONT");
    // A wakes, finishes its step's effect, tries to journal it while the run is live, and is refused.
    await waitFor(() => (readLedger(ledger).get("paused:slow#0") ?? []).length === 2, { timeoutMs: 10_000, what: "A finished its step" });
    a.child.kill("SIGTERM");
    await a.exited;
    await engine.sendEvent("paused", "go", null, { eventId: "go" });
    expect(await engine.result("paused", { timeoutMs: 20_000 })).toBe("slow-done+after");
    b.child.kill("SIGTERM");
    await b.exited;

    const journal = await engine.journal("paused");
    const lastOfA = Math.max(...journal.filter((e) => e.epoch === epochA).map((e) => e.seq));
    const firstOfB = Math.min(...journal.filter((e) => e.epoch > epochA).map((e) => e.seq));
    expect(lastOfA).toBeLessThan(firstOfB);
    expect(journal.filter((e) => e.kind === "step.completed" && e.opKey === "slow#0")).toHaveLength(1);
    expect(journal.at(-1)?.kind).toBe("run.completed");
    expect(journal.filter((e) => e.kind === "run.completed")).toHaveLength(1);
  });
});

describe("several worker processes at once", () => {
  it("three workers share the runs of one SQLite file; every run completes once and no attempt runs twice", async () => {
    const { engine, env, ledger } = await fixtureStore({ CAIRN_TEST_LEASE_MS: "2000", CAIRN_TEST_STEP_MS: "5" });
    const runIds = Array.from({ length: 24 }, (_, i) => `multi-${i}`);
    for (const [i, runId] of runIds.entries()) {
      await engine.start("crashy", { n: i }, { runId });
      await engine.sendEvent(runId, "go", { x: i }, { eventId: `go-${runId}` });
    }
    const workers = [spawnWorker(env), spawnWorker(env), spawnWorker(env)];
    const ids = await Promise.all(workers.map((w) => w.ready));
    for (const [i, runId] of runIds.entries()) expect(await engine.result(runId, { timeoutMs: 30_000 })).toEqual(expectedOutput(i, i));
    for (const w of workers) w.child.kill("SIGTERM");
    await Promise.all(workers.map((w) => w.exited));
    const entries = readLedger(ledger);
    const claimedBy = new Set<string>();
    for (const runId of runIds) {
      const journal = await checkRunInvariants(engine, runId, entries);
      for (const e of journal) if (e.kind === "run.claimed") claimedBy.add((e.data as { workerId: string }).workerId);
      // Without crashes, every step ran exactly once.
      for (const e of journal) if (e.kind === "step.started") expect(e.data).toEqual({ attempt: 1 });
    }
    expect(claimedBy.size, `runs were spread over the workers ${ids.join(", ")}`).toBeGreaterThan(1);
  });
});
