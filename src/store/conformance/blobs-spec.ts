import { describe, expect, it } from "vitest";
import { blobRef, sha256Hex } from "../../core/payloads.js";
import { encode } from "../../core/serialize.js";
import type { PayloadBlob, Store } from "../../core/store.js";
import { T0, entry, newRun, startRun, stepStarted } from "./harness.js";

function blob(text: string): PayloadBlob {
  return { hash: sha256Hex(text), size: Buffer.byteLength(text), body: text };
}

/** Content-addressed blobs: written with what references them, deduplicated, collected when unreferenced. */
export function blobsSpec(store: () => Store): void {
  describe("blobs", () => {
    it("writes a commit's blobs with its entries, once per hash", async () => {
      const run = await startRun(store(), "b1");
      const a = blob("payload A");
      const b = blob("payload B");
      const write = (blobs: PayloadBlob[]) => ({ runId: "b1", epoch: run.leaseEpoch, entries: [stepStarted("s#0")], blobs });
      expect((await store().commit([write([a, b]), write([a])], T0 + 1)).every((r) => r.ok)).toBe(true);
      expect((await store().commit([write([a])], T0 + 2))[0]).toMatchObject({ ok: true });
      const read = await store().readBlobs([a.hash, b.hash, sha256Hex("missing")]);
      expect(read.map((r) => ({ ...r, size: Number(r.size) })).sort((x, y) => x.body.localeCompare(y.body))).toEqual([a, b]);
      expect(await store().readBlobs([])).toEqual([]);
    });

    it("writes no blob for a refused write, and none when the transaction fails", async () => {
      const run = await startRun(store(), "b2");
      const a = blob("refused");
      expect(await store().commit([{ runId: "b2", epoch: run.leaseEpoch + 1, entries: [stepStarted("s#0")], blobs: [a] }], T0 + 1)).toEqual([
        { ok: false, reason: "lease-lost" },
      ]);
      const bad = entry("event.received", "e#0", { type: "t", eventId: "x", payload: null, inboxId: 987_654 });
      await expect(store().commit([{ runId: "b2", epoch: run.leaseEpoch, entries: [stepStarted("s#0"), bad], blobs: [a] }], T0 + 2)).rejects.toThrow();
      expect(await store().readBlobs([a.hash])).toEqual([]);
      expect((await store().readJournal("b2")).map((e) => e.kind)).toEqual(["run.created", "run.claimed"]);
    });

    it("writes a new run's and an event's blobs, but not for a run or event that exists", async () => {
      const input = blob("input");
      await store().createRun(newRun("b3", { input: blobRef(input.hash, input.size), blobs: [input] }), T0);
      const again = blob("not written");
      expect((await store().createRun(newRun("b3", { blobs: [again] }), T0 + 1)).created).toBe(false);
      const event = blob("event");
      await store().sendEvent({ runId: "b3", type: "t", eventId: "e1", payload: blobRef(event.hash, event.size), blobs: [event] }, T0 + 2);
      const duplicate = blob("duplicate event");
      expect(await store().sendEvent({ runId: "b3", type: "t", eventId: "e1", payload: encode(1), blobs: [duplicate] }, T0 + 3)).toEqual({ duplicate: true });
      const found = (await store().readBlobs([input.hash, again.hash, event.hash, duplicate.hash])).map((r) => r.body).sort();
      expect(found).toEqual(["event", "input"]);
    });

    it("deletes only blobs nothing references and nobody wrote since the cut-off", async () => {
      const inJournal = blob("in journal");
      const inInput = blob("in input");
      const inInbox = blob("in inbox");
      const orphan = blob("orphan");
      const recent = blob("recent orphan");
      const run = await startRun(store(), "b4", T0, "w1", { input: blobRef(inInput.hash, inInput.size), blobs: [inInput, orphan] });
      await store().commit(
        [{ runId: "b4", epoch: run.leaseEpoch, entries: [{ ...stepStarted("s#0"), payload: blobRef(inJournal.hash, inJournal.size) }], blobs: [inJournal] }],
        T0 + 1,
      );
      await store().sendEvent({ runId: "b4", type: "t", eventId: "e1", payload: blobRef(inInbox.hash, inInbox.size), blobs: [inInbox] }, T0 + 2);
      await store().commit([{ runId: "b4", epoch: run.leaseEpoch, entries: [], blobs: [recent] }], T0 + 100);
      expect(await store().deleteUnreferencedBlobs(T0 + 50)).toBe(1);
      const left = (await store().readBlobs([inJournal.hash, inInput.hash, inInbox.hash, orphan.hash, recent.hash])).map((r) => r.body).sort();
      expect(left).toEqual(["in inbox", "in input", "in journal", "recent orphan"]);
      expect(await store().deleteUnreferencedBlobs(T0 + 101)).toBe(1);
    });
  });
}
