// Many runs in every state, written straight through a store (batched commits), with the figures
// the overview must show for them: for the overview's tests at volume (more than 1,000 runs).
import { expect } from "vitest";
import { newEntry } from "../../src/core/journal.js";
import { encode } from "../../src/core/serialize.js";
import type { NewRun, RunWrite, Store } from "../../src/core/store.js";

/** The runs' workflows (nothing registers them, so no worker picks them up). */
export const BULK_WORKFLOWS = ["bulk-a", "bulk-b"] as const;
const DAY = 24 * 3_600_000;
/** Cost of each model call the bulk runs journal: sub-cent, in micro-dollars ($0.000455). */
export const BULK_CALL_MICROS = 455;

/** What the overview must show for a {@link seedBulkRuns} store. */
export interface BulkFigures {
  byStatus: Record<string, number>;
  /** Failed runs created in the last 24 hours, all one error pattern. */
  recentFailures: number;
  /** Model calls (and their cost) of runs created in the last 24 hours. */
  recentCalls: number;
  recentCostMicros: number;
  /** A parent whose child's spend must roll up into it, and what it totals. */
  parent: { runId: string; costMicros: number };
}

/**
 * Writes `count` runs: a tenth created three days ago, the rest in the last few hours. By index
 * modulo 10: 0–1 failed (messages differing by a tenant id and a number), 2–4 completed with one
 * model call each (the run at count - 6 a child of the one before it), 5 cancelled, 6 suspended, 7 running, 8–9 pending.
 */
export async function seedBulkRuns(store: Store, count: number, now = Date.now()): Promise<BulkFigures> {
  const createdAt = (i: number) => (i < count / 10 ? now - 3 * DAY - (count - i) * 1000 : now - (count - i) * 500);
  const id = (i: number) => `bulk-${String(i).padStart(5, "0")}`;
  const figures: BulkFigures = {
    byStatus: {},
    recentFailures: 0,
    recentCalls: 0,
    recentCostMicros: 0,
    parent: { runId: id(count - 7), costMicros: 2 * BULK_CALL_MICROS },
  };
  const statusOf = (i: number) =>
    ["failed", "failed", "completed", "completed", "completed", "cancelled", "suspended", "running", "pending", "pending"][i % 10]!;
  const newRun = (i: number): NewRun => ({
    runId: id(i),
    workflow: BULK_WORKFLOWS[i % 2 === 0 ? 0 : 1],
    version: "1",
    input: encode({ i }),
    ...(i === count - 6 ? { parentRunId: id(i - 1) } : {}),
  });
  // Runs that move on are created (in groups sharing a createdAt), claimed, then finished in batches.
  const moving = Array.from({ length: count }, (_, i) => i).filter((i) => statusOf(i) !== "pending");
  const created = new Map<number, number>();
  const create = async (indexes: number[]) => {
    for (let start = 0; start < indexes.length; start += 50) {
      const group = indexes.slice(start, start + 50);
      const at = createdAt(group[0]!);
      await store.createRuns(group.map(newRun), at);
      for (const i of group) created.set(i, at);
    }
  };
  await create(moving);
  const workflows = BULK_WORKFLOWS.map((name) => ({ name, version: "1" }));
  const epochs = new Map<string, number>();
  for (;;) {
    const claimed = await store.claimRuns({ workerId: "bulk", now, leaseMs: 3_600_000, limit: 1000, workflows });
    if (claimed.length === 0) break;
    for (const run of claimed) epochs.set(run.runId, run.leaseEpoch);
  }
  expect(epochs.size).toBe(moving.length);
  const writes: RunWrite[] = [];
  for (const i of moving) {
    const status = statusOf(i);
    const recent = created.get(i)! >= now - DAY;
    const entries = [];
    if (status === "failed") {
      entries.push(newEntry("run.failed", null, { error: { name: "Error", message: `quota exceeded for tenant t-${i}: ${i * 7} calls`, opKey: "call#0" } }));
      if (recent) figures.recentFailures++;
    } else if (status === "completed") {
      if (i === count - 7)
        entries.push(newEntry("child.started", "child#0", { childRunId: id(i + 1), workflow: BULK_WORKFLOWS[1], version: "1", input: { i: i + 1 } }));
      entries.push(newEntry("step.started", "model#0", { attempt: 1 }));
      entries.push(
        newEntry("step.completed", "model#0", {
          result: { text: "ok", usage: { inputTokens: 100, outputTokens: 20 }, costMicros: BULK_CALL_MICROS },
          attempt: 1,
        }),
      );
      entries.push(newEntry("run.completed", null, { output: i }));
      if (recent) {
        figures.recentCalls++;
        figures.recentCostMicros += BULK_CALL_MICROS;
      }
    } else if (status === "cancelled") entries.push(newEntry("run.cancelled", null, { reason: "bulk" }));
    else if (status === "suspended")
      entries.push(newEntry("run.suspended", null, { wakeAt: null, waitingFor: [{ kind: "event", opKey: "go#0", type: "go", timeoutAt: null }] }));
    if (entries.length) writes.push({ runId: id(i), epoch: epochs.get(id(i))!, entries });
  }
  for (let start = 0; start < writes.length; start += 500) {
    const results = await store.commit(writes.slice(start, start + 500), now);
    expect(results.every((result) => result.ok)).toBe(true);
  }
  const pending = Array.from({ length: count }, (_, i) => i).filter((i) => statusOf(i) === "pending");
  await create(pending);
  for (let i = 0; i < count; i++) figures.byStatus[statusOf(i)] = (figures.byStatus[statusOf(i)] ?? 0) + 1;
  return figures;
}
