import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { expect, it } from "vitest";
import { createEngine } from "../../src/engine/create-engine.js";
import type { Engine } from "../../src/engine/engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import { waitFor } from "../../src/testing/wait-for.js";
import { onCleanup, tempDir } from "./engines.js";
import { spawnWorker } from "./processes.js";
import { durableStoreUrl, type DurableStore } from "./store-urls.js";
// @ts-expect-error plain JS fixture
import { workflows } from "../fixtures/live-workflows.mjs";

const FIXTURE = resolve("test/fixtures/live-workflows.mjs");

async function setup(kind: DurableStore): Promise<{ engine: Engine; env: Record<string, string>; lines: () => string[] }> {
  const store = durableStoreUrl(kind);
  const ledger = join(tempDir(), "ledger.txt");
  writeFileSync(ledger, "");
  const engine = await createEngine({ store, workflows, logger: silentLogger });
  onCleanup(() => engine.close());
  const env = { CAIRN_TEST_STORE: store, CAIRN_TEST_WORKFLOWS: FIXTURE, CAIRN_TEST_LEDGER: ledger, CAIRN_TEST_LEASE_MS: "300" };
  return { engine, env, lines: () => readFileSync(ledger, "utf8").split("\n").filter(Boolean) };
}

/**
 * Live runs across real SIGKILLs of worker processes, on one store: a request's reply survives a
 * worker killed right after journaling it, and is never produced twice; a continue-as-new chain stays
 * one chain whether the worker dies just before or just after the commit that links the runs; a deadline
 * that passes while no worker runs cancels (and compensates) the run once a worker is back.
 */
export function liveCrashSuite(kind: DurableStore): void {
  it("a reply journaled by a worker SIGKILLed before anyone read it reaches the caller; asking again never reruns the handler", async () => {
    const { engine, env, lines } = await setup(kind);
    await engine.start("steer", { topic: "lithium" }, { runId: "s1" });
    const first = spawnWorker({ ...env, CAIRN_CRASH_AT: "after-reply", CAIRN_CRASH_MATCH: "reply:steer" });
    await first.ready;
    const reply = await engine.request("s1", "steer", { topic: "tides" }, { requestId: "q1", timeoutMs: 20_000 });
    expect(reply).toEqual({ topic: "tides" });
    expect((await first.exited).signal).toBe("SIGKILL");
    // Nobody runs the run now: the same request id is answered from the store.
    expect(await engine.request("s1", "steer", { topic: "other" }, { requestId: "q1", timeoutMs: 1000 })).toEqual({ topic: "tides" });
    const second = spawnWorker(env);
    await second.ready;
    expect(await engine.request("s1", "steer", { topic: "sodium" }, { requestId: "q2", timeoutMs: 20_000 })).toEqual({ topic: "sodium" });
    await engine.sendEvent("s1", "finish", null);
    expect(await engine.result("s1", { timeoutMs: 20_000 })).toBe("sodium");
    second.child.kill("SIGTERM");
    await second.exited;
    expect(lines().map((l) => l.split(" ").slice(0, 2).join(" "))).toEqual(["apply tides", "apply sodium"]);
    const replies = (await engine.journal("s1")).filter((e) => e.kind === "request.replied").map((e) => (e.data as { requestId: string }).requestId);
    expect(replies).toEqual(["q1", "q2"]);
  }, 60_000);

  it.each(["before-continue", "after-continue"])(
    "continue as new stays one chain when the worker is SIGKILLed at %s",
    async (point) => {
      const { engine, env, lines } = await setup(kind);
      await engine.start("counter", { n: 0 }, { runId: "c", tags: { job: "count" } });
      const first = spawnWorker({ ...env, CAIRN_CRASH_AT: point });
      expect((await first.exited).signal).toBe("SIGKILL");
      const second = spawnWorker(env);
      await second.ready;
      expect(await engine.result("c", { timeoutMs: 20_000 })).toBe(3);
      second.child.kill("SIGTERM");
      await second.exited;
      const runs = (await engine.listRuns({ workflow: "counter" })).runs.map((r) => [r.runId, r.status]);
      expect(runs.sort()).toEqual([
        ["c", "completed"],
        ["c~2", "completed"],
        ["c~3", "completed"],
      ]);
      expect((await engine.getRun("c~3")).tags).toEqual({ job: "count" });
      expect((await engine.getRun("c~2")).continuedFrom).toBe("c");
      // Each number was counted in its own run. A worker killed before the continue may die before its
      // step's outcome was durable: that step runs again (at least once, same idempotency key), the chain does not fork.
      expect([...new Set(lines())]).toEqual(["inc 1 c", "inc 2 c~2", "inc 3 c~3"]);
      expect(lines().filter((l) => l !== "inc 1 c")).toEqual(["inc 2 c~2", "inc 3 c~3"]);
    },
    60_000,
  );

  it("a deadline that passes while every worker is down cancels and compensates the run once a worker is back", async () => {
    const { engine, env, lines } = await setup(kind);
    await engine.start("slow", null, { runId: "d1", deadline: "6s" });
    const first = spawnWorker(env);
    await first.ready;
    await waitFor(async () => (await engine.getRun("d1")).status === "suspended", { what: "d1 to sleep" });
    first.child.kill("SIGKILL");
    await first.exited;
    const created = (await engine.getRun("d1")).createdAt.getTime();
    await waitFor(() => Date.now() > created + 6200, { what: "the deadline to pass", timeoutMs: 15_000 });
    expect((await engine.getRun("d1")).status).toBe("suspended");
    const second = spawnWorker(env);
    await second.ready;
    await waitFor(async () => (await engine.getRun("d1")).status === "compensated", { what: "d1 cancelled by its deadline", timeoutMs: 20_000 });
    second.child.kill("SIGTERM");
    await second.exited;
    expect(lines()).toEqual(["undo b-1"]);
    expect((await engine.journal("d1")).find((e) => e.kind === "run.cancelling")?.data).toEqual({ reason: "deadline" });
  }, 60_000);
}
