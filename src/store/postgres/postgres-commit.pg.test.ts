import pg from "pg";
import { describe, expect, it } from "vitest";
import { onCleanup } from "../../../test/support/engines.js";
import { durableStoreUrl, postgresReachable } from "../../../test/support/store-urls.js";
import { newEntry } from "../../core/journal.js";
import { encode } from "../../core/serialize.js";
import type { RunWrite, Store } from "../../core/store.js";
import { openStore } from "../open-store.js";

const available = await postgresReachable();

/** Counts the statements every `pg` client of this process sends while `fn` runs. */
/**
 * The statements `fn` sends that write or frame a transaction. Background statements of the store's
 * other connections (its clock read or listener, which a loaded machine can schedule into the window)
 * are not the commit's and are not counted.
 */
async function statementsDuring(fn: () => Promise<unknown>): Promise<number> {
  const original = pg.Client.prototype.query;
  const sent: string[] = [];
  pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
    const query = args[0];
    sent.push(typeof query === "string" ? query : String((query as { text?: unknown } | null)?.text ?? query));
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    await fn();
  } finally {
    pg.Client.prototype.query = original;
  }
  return sent.filter((text) => /cairn_append|journal|\b(BEGIN|COMMIT|INSERT|UPDATE|DELETE)\b/i.test(text)).length;
}

async function heldStore(runIds: string[]): Promise<Store> {
  const store = await openStore(durableStoreUrl("postgres"));
  onCleanup(() => store.close());
  for (const runId of runIds) {
    await store.createRun({ runId, workflow: "wf", version: "1", input: encode(null), claimFor: { workerId: "w", leaseMs: 60_000 } }, Date.now());
  }
  return store;
}

const step = (opKey: string): RunWrite["entries"][number] => newEntry("step.started", opKey, { attempt: 1 });

describe.skipIf(!available)("postgres commit round trips", () => {
  it("commits a batch of step entries to held runs in one statement", async () => {
    const store = await heldStore(["a", "b"]);
    await store.commit([{ runId: "a", epoch: 1, entries: [step("warm#0")] }], Date.now());
    let results: unknown;
    const sent = await statementsDuring(async () => {
      results = await store.commit(
        [
          { runId: "a", epoch: 1, entries: [step("x#0"), step("y#0")] },
          { runId: "b", epoch: 1, entries: [step("x#0")] },
          { runId: "a", epoch: 1, entries: [step("z#0")] },
        ],
        Date.now(),
      );
    });
    expect(sent).toBe(1);
    expect(results).toEqual([
      { ok: true, firstSeq: 4, lastSeq: 5 },
      { ok: true, firstSeq: 3, lastSeq: 3 },
      { ok: true, firstSeq: 6, lastSeq: 6 },
    ]);
    expect((await store.readJournal("a")).map((entry) => entry.opKey)).toEqual([null, null, "warm#0", "x#0", "y#0", "z#0"]);
  });

  it("writes nothing of a one-statement batch with a fenced write, and refuses only that write", async () => {
    const store = await heldStore(["a", "b"]);
    const results = await store.commit(
      [
        { runId: "a", epoch: 1, entries: [step("x#0")] },
        { runId: "b", epoch: 2, entries: [step("x#0")] },
      ],
      Date.now(),
    );
    expect(results).toEqual([
      { ok: true, firstSeq: 3, lastSeq: 3 },
      { ok: false, reason: "lease-lost" },
    ]);
    expect((await store.readJournal("a")).map((entry) => entry.seq)).toEqual([1, 2, 3]);
    expect((await store.readJournal("b")).map((entry) => entry.seq)).toEqual([1, 2]);
    expect((await store.getRun("b"))?.lastSeq).toBe(2);
  });
});
