/**
 * Step flow control across worker processes sharing one store: the per-key concurrency limit is
 * reached and never exceeded, other keys are not blocked, and a SIGKILLed slot holder frees its slot
 * when its lease expires. Run by test/step-flow.test.ts (SQLite) and test/step-flow.pg.test.ts.
 */
import { appendFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { expect, it } from "vitest";
import { createEngine } from "../../src/engine/create-engine.js";
import type { Engine } from "../../src/engine/engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import { waitFor } from "../../src/testing/wait-for.js";
import { onCleanup, tempDir } from "./engines.js";
import { spawnWorker } from "./processes.js";
import { maxSimultaneous } from "./flow-suite.js";
// @ts-expect-error plain JS fixture
import { workflows } from "../fixtures/step-flow-workflows.mjs";

const WORKER = resolve("test/fixtures/step-flow-worker.mjs");

/** Registers the tests; `url()` gives a fresh store URL for one test, shared by every process of it. */
export function stepFlowSuite(url: () => Promise<string>): void {
  async function setUp(): Promise<{ store: string; engine: Engine; ledger: string; hang: string; lines(): string[] }> {
    const store = await url();
    const engine = await createEngine({ store, workflows, logger: silentLogger });
    onCleanup(() => engine.close());
    const dir = tempDir();
    const ledger = join(dir, "ledger.txt");
    writeFileSync(ledger, "");
    return { store, engine, ledger, hang: join(dir, "hang"), lines: () => readFileSync(ledger, "utf8").split("\n").filter(Boolean) };
  }

  it("three worker processes: tenant a reaches its limit of 2 and never exceeds it; tenant b is not held up", async () => {
    const { store, engine, ledger, hang, lines } = await setUp();
    // Few slots per worker, so every process takes part.
    const env = { CAIRN_TEST_STORE: store, CAIRN_TEST_LEDGER: ledger, CAIRN_TEST_HANG: hang, CAIRN_TEST_CONCURRENCY: "3" };
    const workers = [spawnWorker(env, WORKER), spawnWorker(env, WORKER), spawnWorker(env, WORKER)];
    await Promise.all(workers.map((w) => w.ready));
    for (let i = 0; i < 8; i++) await engine.start("tenant-call", { tenant: "a", holdMs: 200 }, { runId: `a${i}` });
    for (let i = 0; i < 2; i++) await engine.start("tenant-call", { tenant: "b", holdMs: 50 }, { runId: `b${i}` });
    for (let i = 0; i < 8; i++) expect(await engine.handle(`a${i}`).result({ timeoutMs: 30_000 })).toBe("a");
    for (let i = 0; i < 2; i++) expect(await engine.handle(`b${i}`).result({ timeoutMs: 5_000 })).toBe("b");
    const log = lines();
    const perTenant = (tenant: string) => maxSimultaneous(log.filter((l) => l.split(" ")[2] === tenant));
    expect(perTenant("a")).toMatchObject({ perKey: 2, enters: 8 });
    expect(perTenant("b").perKey).toBeLessThanOrEqual(2);
    // b's calls did not queue behind a's: both were done before a's last call began.
    const lastA = log.map((l) => l.split(" ")).findLastIndex(([what, , tenant]) => what === "enter" && tenant === "a");
    expect(log.filter((l, i) => l.startsWith("exit b") && i < lastA)).toHaveLength(2);
    // The calls ran in several processes, sharing one limit.
    expect(new Set(log.map((l) => l.split(" ")[3])).size).toBeGreaterThan(1);
  });

  it("a SIGKILLed slot holder frees its slot when its lease expires; the waiter then runs, alone", async () => {
    const { store, engine, ledger, hang, lines } = await setUp();
    writeFileSync(hang, "");
    const env = { CAIRN_TEST_STORE: store, CAIRN_TEST_LEDGER: ledger, CAIRN_TEST_HANG: hang, CAIRN_TEST_LEASE_MS: "1500" };
    const holder = spawnWorker(env, WORKER);
    await holder.ready;
    await engine.start("tenant-call", { tenant: "t", limit: 1, hang: true }, { runId: "holder" });
    await waitFor(() => lines().some((l) => l.startsWith("enter holder")), { timeoutMs: 10_000, what: "the holder's step to start" });
    const other = spawnWorker(env, WORKER);
    await other.ready;
    await engine.start("tenant-call", { tenant: "t", limit: 1 }, { runId: "waiter" });
    await waitFor(async () => (await engine.getRun("waiter")).waitingFor.some((w) => w.kind === "flow"), { timeoutMs: 10_000, what: "the waiter to queue" });
    expect(lines().some((l) => l.startsWith("enter waiter"))).toBe(false);
    holder.child.kill("SIGKILL");
    await holder.exited;
    appendFileSync(ledger, `exit holder t killed\n`);
    rmSync(hang);
    expect(await engine.handle("waiter").result({ timeoutMs: 20_000 })).toBe("t");
    expect(await engine.handle("holder").result({ timeoutMs: 20_000 })).toBe("t");
    const log = lines();
    expect(log.indexOf("exit holder t killed")).toBeLessThan(log.findIndex((l) => l.startsWith("enter waiter")));
    expect(maxSimultaneous(log).perKey).toBe(1);
  });
}
