import { afterEach, beforeEach, expect } from "vitest";
import { newEntry, type EntryData, type EntryKind, type JournalEntry } from "../../core/journal.js";
import type { RunRecord } from "../../core/run.js";
import { decode, encode } from "../../core/serialize.js";
import type { NewRun, Store } from "../../core/store.js";

/** Creates an isolated, migrated store for one test, and disposes of it afterwards. */
export interface StoreFactory {
  create(): Promise<Store>;
  destroy(store: Store): Promise<void>;
}

/** Registers per-test set-up and tear-down; returns a getter for the current test's store. */
export function useStore(factory: StoreFactory): () => Store {
  let current: Store | undefined;
  beforeEach(async () => {
    current = await factory.create();
  });
  afterEach(async () => {
    const store = current;
    current = undefined;
    if (store) await factory.destroy(store);
  });
  return () => {
    if (!current) throw new Error("The store is only available inside a test.");
    return current;
  };
}

/** A fixed base time, so every expected timestamp is exact. */
export const T0 = 1_700_000_000_000;

/** The workflow most test runs belong to. */
export const WF = { name: "wf", version: "1" } as const;

/** A run to create, of {@link WF} unless overridden. */
export function newRun(runId: string, extra: Partial<NewRun> = {}): NewRun {
  return { runId, workflow: WF.name, version: WF.version, input: encode({ runId }), ...extra };
}

/** Shorthand for `newEntry`. */
export const entry = newEntry;

/** A step.started entry. */
export function stepStarted(name: string, attempt = 1) {
  return newEntry("step.started", name, { attempt });
}

/**
 * Creates a run of its own workflow and claims it, so no other run can be taken instead.
 * Returns the claimed row (leaseEpoch 1, lastSeq 2).
 */
export async function startRun(store: Store, runId: string, now = T0, workerId = "w1", extra: Partial<NewRun> = {}): Promise<RunRecord> {
  const workflow = `solo:${runId}`;
  await store.createRun(newRun(runId, { workflow, ...extra }), now);
  const claimed = await store.claimRuns({ workerId, now, leaseMs: 30_000, limit: 1, workflows: [{ name: workflow, version: WF.version }] });
  expect(claimed.map((run) => run.runId)).toEqual([runId]);
  return claimed[0] as RunRecord;
}

/** Claims a run created by {@link startRun} again (after it was suspended, released or retried). */
export async function reclaim(store: Store, runId: string, now: number, workerId = "w1"): Promise<RunRecord[]> {
  return store.claimRuns({ workerId, now, leaseMs: 30_000, limit: 10, workflows: [{ name: `solo:${runId}`, version: WF.version }] });
}

/** Commits one write and expects it to be accepted. */
export async function commitOk(store: Store, run: Pick<RunRecord, "runId" | "leaseEpoch">, entries: ReturnType<typeof newEntry>[], now: number): Promise<void> {
  const [result] = await store.commit([{ runId: run.runId, epoch: run.leaseEpoch, entries }], now);
  expect(result).toMatchObject({ ok: true });
}

/** Suspends a held run. */
export async function suspend(store: Store, run: Pick<RunRecord, "runId" | "leaseEpoch">, wakeAt: number | null, now: number): Promise<void> {
  await commitOk(store, run, [newEntry("run.suspended", null, { wakeAt, waitingFor: [] })], now);
}

/** The run's row, which must exist. */
export async function mustGet(store: Store, runId: string): Promise<RunRecord> {
  const run = await store.getRun(runId);
  expect(run, `run ${runId}`).toBeDefined();
  return run as RunRecord;
}

/** The decoded data of a journal entry. */
export function dataOf<K extends EntryKind>(stored: JournalEntry | undefined, kind: K): EntryData[K] {
  expect(stored?.kind).toBe(kind);
  return decode<EntryData[K]>(stored?.payload);
}

/** Seqs of a run's journal. */
export async function seqs(store: Store, runId: string): Promise<number[]> {
  return (await store.readJournal(runId)).map((stored) => stored.seq);
}
