/**
 * Offloaded and encrypted payloads, against a real database: the same suite runs on SQLite
 * (test/payloads.test.ts) and PostgreSQL (test/payloads.pg.test.ts). Raw SQL looks at and
 * tampers with the rows behind the engine's back.
 */
import { describe, expect, it } from "vitest";
import { newEntry } from "../../src/core/journal.js";
import { isCairnError } from "../../src/core/errors.js";
import { parseMarker } from "../../src/core/payloads.js";
import { encode } from "../../src/core/serialize.js";
import type { Store } from "../../src/core/store.js";
import { createEngine } from "../../src/engine/create-engine.js";
import { defineWorkflow } from "../../src/engine/define-workflow.js";
import type { Engine, EngineOptions } from "../../src/engine/engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import { createServer } from "../../src/server/create-server.js";
import { openStore } from "../../src/store/open-store.js";
import { aesGcmCodec, peekKeyId } from "../../src/store/payloads/aes-gcm-codec.js";
import { withPayloads } from "../../src/store/payloads/payload-store.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { waitFor } from "../../src/testing/wait-for.js";
import { onCleanup } from "./engines.js";

/** A fresh database for one test, with raw access to its tables. */
export interface RawDatabase {
  url: string;
  /** Runs SQL; `t("journal")` names a table of the store. */
  sql<R = any>(text: string): Promise<R[]>;
  t(table: string): string;
  /** Everything the database holds on disk or in its tables, as text (for plaintext searches). */
  dump(): Promise<string>;
}

/** `n` characters made of `seed`: large enough to be offloaded (the default inline limit is 64 KiB). */
export function big(seed: string, n = 100_000): string {
  return seed.repeat(Math.ceil(n / seed.length)).slice(0, n);
}

const REF = /^\{"\$cairn":"blob","sha256":"([0-9a-f]{64})","size":(\d+)\}$/;
const KEY1 = Buffer.alloc(32, 1).toString("base64");
const KEY2 = Buffer.alloc(32, 2).toString("base64");

let executions = 0;
const bigFlow = defineWorkflow({
  name: "big",
  version: "1",
  async run(ctx, input: { seed: string }) {
    const made = await ctx.step("make", () => {
      executions++;
      return big(input.seed);
    });
    const same = await ctx.step("same", () => big(input.seed));
    const doc = await ctx.waitForEvent<{ text: string }>("doc");
    return { length: made.length + same.length + doc.text.length, head: doc.text.slice(0, 6) };
  },
});

const secretFlow = defineWorkflow({
  name: "secret",
  version: "1",
  async run(ctx, input: { secret: string }) {
    const small = await ctx.step("small", () => `${input.secret}-step`);
    const large = await ctx.step("large", () => big(input.secret, 80_000));
    const reply = await ctx.askHuman<string>({ name: "check", question: "Proceed?", options: ["yes", "no"], context: { about: input.secret } });
    const doc = await ctx.waitForEvent<{ note: string }>("doc");
    return { small, large: large.length, note: doc.note, answer: reply.value, out: `${input.secret}-out` };
  },
});

const emitFlow = defineWorkflow({
  name: "emitter",
  version: "1",
  async run(ctx, input: { secret: string }) {
    await ctx.emit("secret.topic", { note: `${input.secret}-message` });
    return "sent";
  },
});

async function engineOn(db: RawDatabase, options: EngineOptions = {}): Promise<Engine> {
  const engine = await createEngine({ store: db.url, workflows: [bigFlow, secretFlow, emitFlow], logger: silentLogger, ...options });
  onCleanup(() => engine.close());
  return engine;
}

async function until(engine: Engine, runId: string, status: string): Promise<void> {
  await waitFor(async () => (await engine.getRun(runId)).status === status, { timeoutMs: 15_000, what: `run ${runId} ${status}` });
}

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error("expected a rejection");
}

/** Runs `secretFlow` to completion. */
async function runSecret(engine: Engine, runId: string, secret: string): Promise<void> {
  const worker = engine.startWorker({ pollInterval: 10 });
  await engine.start(secretFlow, { secret }, { runId });
  await until(engine, runId, "suspended");
  await engine.sendEvent(runId, "doc", { note: `${secret}-note` }, { eventId: `doc-${runId}` });
  const [request] = await engine.listHumanRequests({ runId, status: "pending" });
  expect(request?.context).toBe(encode({ about: secret }));
  await engine.respondToHuman(request!.requestId, { action: "answer", option: "yes", value: `${secret}-answer` });
  await engine.result(runId, { timeoutMs: 15_000 });
  await worker.stop({ drain: true });
}

/** Registers the payload tests for one backend; `open` gives a fresh database per test. */
export function payloadsSuite(name: string, open: () => Promise<RawDatabase>): void {
  describe(`${name}: offloaded payloads`, () => {
    it("round-trips a large step result and a large event through the journal, replay and the API, storing only references", async () => {
      const db = await open();
      const engine = await engineOn(db);
      executions = 0;
      let worker = engine.startWorker({ pollInterval: 10 });
      await engine.start(bigFlow, { seed: "abc" }, { runId: "r1" });
      await until(engine, "r1", "suspended");
      await worker.stop({ drain: true });
      // The run is only rows now; a new worker replays both large results from the journal.
      await engine.sendEvent("r1", "doc", { text: big("xyz") }, { eventId: "doc-1" });
      worker = engine.startWorker({ pollInterval: 10 });
      expect(await engine.result("r1", { timeoutMs: 15_000 })).toEqual({ length: 300_000, head: "xyzxyz" });
      await worker.stop({ drain: true });
      expect(executions).toBe(1);

      const journal = await engine.journal("r1");
      const results = journal.filter((e) => e.kind === "step.completed").map((e) => (e.data as { result: string }).result);
      expect(results).toEqual([big("abc"), big("abc")]);
      const received = journal.find((e) => e.kind === "event.received");
      expect((received?.data as { payload: { text: string } }).payload.text).toBe(big("xyz"));
      const inbox = await engine.store.listInbox("r1");
      expect(JSON.parse(inbox[0]!.payload)).toEqual({ text: big("xyz") });

      // A journal page elides entries above 8 KiB (with their size); each is whole on its own route.
      const app = createServer(engine);
      const api = await app.request("/runs/r1/journal");
      expect(api.status).toBe(200);
      const body = (await api.json()) as { entries: { seq: number; kind: string; data: unknown; elided?: number }[] };
      const steps = body.entries.filter((e) => e.kind === "step.completed");
      expect(steps.map((e) => [e.data, e.elided! > 8192])).toEqual([
        [null, true],
        [null, true],
      ]);
      const whole = await Promise.all(
        steps.map(async (e) => ((await (await app.request(`/runs/r1/journal/${e.seq}`)).json()) as { data: { result: string } }).data.result),
      );
      expect(whole).toEqual([big("abc"), big("abc")]);

      // The rows hold references only, and the two identical results share one blob.
      const rows = await db.sql<{ kind: string; payload: string }>(`SELECT kind, payload FROM ${db.t("journal")} WHERE run_id = 'r1' ORDER BY seq`);
      const large = rows.filter((row) => row.payload.length > 1000);
      expect(large).toEqual([]);
      const refs = rows.filter((row) => row.kind === "step.completed").map((row) => REF.exec(row.payload)?.[1]);
      expect(refs[0]).toMatch(/^[0-9a-f]{64}$/);
      expect(refs[1]).toBe(refs[0]);
      const [inboxRow] = await db.sql<{ payload: string }>(`SELECT payload FROM ${db.t("inbox")} WHERE run_id = 'r1'`);
      expect(inboxRow!.payload).toMatch(REF);
      // One blob for both step results, one for the inbox event, one for the event.received entry.
      const [count] = await db.sql<{ n: number }>(`SELECT count(*) AS n FROM ${db.t("blobs")}`);
      expect(Number(count!.n)).toBe(3);
    });

    it("prune deletes the blobs of the runs it deletes, and keeps blobs another run still references", async () => {
      const db = await open();
      const clock = new ManualClock(Date.UTC(2030, 0, 1));
      // On PostgreSQL the engine takes the database's time unless told to use its own clock.
      const store = db.url.startsWith("postgres") ? `${db.url}${db.url.includes("?") ? "&" : "?"}clock=caller` : db.url;
      const engine = await engineOn(db, { store, clock: clock.now });
      const worker = engine.startWorker({ pollInterval: 10 });
      for (const [runId, seed] of [
        ["old", "abc"],
        ["kept", "def"],
      ] as const) {
        await engine.start(bigFlow, { seed }, { runId });
        await until(engine, runId, "suspended");
        await engine.sendEvent(runId, "doc", { text: big(`${seed}-doc`) }, { eventId: `doc-${runId}` });
        await engine.result(runId, { timeoutMs: 15_000 });
        if (runId === "old") clock.advance("40d");
      }
      await worker.stop({ drain: true });
      const [before] = await db.sql<{ n: number }>(`SELECT count(*) AS n FROM ${db.t("blobs")}`);
      expect(Number(before!.n)).toBe(6);
      const result = await engine.prune({ finishedBefore: "30d" });
      expect(result).toMatchObject({ runIds: ["old"], blobsDeleted: 3 });
      const [after] = await db.sql<{ n: number }>(`SELECT count(*) AS n FROM ${db.t("blobs")}`);
      expect(Number(after!.n)).toBe(3);
      expect(((await engine.result("kept")) as { length: number }).length).toBe(300_000);
    });

    it("detects a blob whose bytes were changed and names the run, seq and hash", async () => {
      const db = await open();
      const engine = await engineOn(db);
      const worker = engine.startWorker({ pollInterval: 10 });
      await engine.start(bigFlow, { seed: "abc" }, { runId: "r2" });
      await until(engine, "r2", "suspended");
      await worker.stop({ drain: true });
      const [row] = await db.sql<{ seq: number; payload: string }>(
        `SELECT seq, payload FROM ${db.t("journal")} WHERE run_id = 'r2' AND kind = 'step.completed' ORDER BY seq LIMIT 1`,
      );
      const hash = REF.exec(row!.payload)![1]!;
      await db.sql(`UPDATE ${db.t("blobs")} SET body = replace(body, 'abcabc', 'abcabd') WHERE hash = '${hash}'`);
      const error = await rejection(engine.journal("r2"));
      expect(error.code).toBe("PAYLOAD_CORRUPT");
      expect(error.message).toContain(`run "r2" journal seq ${Number(row!.seq)}`);
      expect(error.message).toContain(hash);
      // A page does not load an elided blob; the entry's own route does, and refuses it.
      expect((await createServer(engine).request("/runs/r2/journal")).status).toBe(200);
      const api = await createServer(engine).request(`/runs/r2/journal/${Number(row!.seq)}`);
      expect(api.status).toBe(500);
      expect(await api.json()).toMatchObject({ error: { code: "PAYLOAD_CORRUPT" } });
      // Replay refuses it too: the run does not go on with wrong data.
      await expect(engine.store.readJournalForResume("r2")).rejects.toMatchObject({ code: "PAYLOAD_CORRUPT" });
      // A deleted blob is as bad as a changed one.
      await db.sql(`DELETE FROM ${db.t("blobs")} WHERE hash = '${hash}'`);
      await expect(engine.journal("r2")).rejects.toMatchObject({ code: "PAYLOAD_CORRUPT" });
    });

    it("detects a changed blob behind an event: in the inbox before delivery, and in event.received after", async () => {
      const db = await open();
      const engine = await engineOn(db);
      let worker = engine.startWorker({ pollInterval: 10 });
      await engine.start(bigFlow, { seed: "abc" }, { runId: "ev" });
      await until(engine, "ev", "suspended");
      await worker.stop({ drain: true });
      await engine.sendEvent("ev", "doc", { text: big("xyz") }, { eventId: "doc-1" });
      const [queued] = await db.sql<{ payload: string }>(`SELECT payload FROM ${db.t("inbox")} WHERE run_id = 'ev'`);
      const inboxHash = REF.exec(queued!.payload)![1]!;
      const tamper = (hash: string) => db.sql(`UPDATE ${db.t("blobs")} SET body = replace(body, 'xyzxyz', 'xyzxyd') WHERE hash = '${hash}'`);
      const restore = (hash: string) => db.sql(`UPDATE ${db.t("blobs")} SET body = replace(body, 'xyzxyd', 'xyzxyz') WHERE hash = '${hash}'`);

      await tamper(inboxHash);
      const inInbox = await rejection(engine.store.listInbox("ev"));
      expect(inInbox.code).toBe("PAYLOAD_CORRUPT");
      expect(inInbox.message).toContain('run "ev" inbox event "doc-1"');
      expect(inInbox.message).toContain(inboxHash);
      // The run cannot take the event while its bytes are wrong.
      await expect(engine.store.pendingEvents("ev", "doc")).rejects.toMatchObject({ code: "PAYLOAD_CORRUPT" });

      await restore(inboxHash);
      worker = engine.startWorker({ pollInterval: 10 });
      expect(await engine.result("ev", { timeoutMs: 15_000 })).toEqual({ length: 300_000, head: "xyzxyz" });
      await worker.stop({ drain: true });
      const [received] = await db.sql<{ seq: number; payload: string }>(
        `SELECT seq, payload FROM ${db.t("journal")} WHERE run_id = 'ev' AND kind = 'event.received'`,
      );
      const receivedHash = REF.exec(received!.payload)![1]!;
      expect(receivedHash).not.toBe(inboxHash); // the entry holds the event with its id and type: another blob
      await tamper(receivedHash);
      const inJournal = await rejection(engine.journal("ev"));
      expect(inJournal.code).toBe("PAYLOAD_CORRUPT");
      expect(inJournal.message).toContain(`run "ev" journal seq ${Number(received!.seq)}`);
      expect(inJournal.message).toContain(receivedHash);
      await expect(engine.store.readJournalForResume("ev")).rejects.toMatchObject({ code: "PAYLOAD_CORRUPT" });
    });

    it("writes a blob only with the entry that references it: a refused or failed commit leaves none", async () => {
      const db = await open();
      const store: Store = withPayloads(await openStore(db.url), { codec: null });
      onCleanup(() => store.close());
      await store.createRun({ runId: "a1", workflow: "w", version: "1", input: encode({}) }, 1000);
      const [run] = await store.claimRuns({ workerId: "w1", now: 1000, leaseMs: 30_000, limit: 1, workflows: [{ name: "w", version: "1" }] });
      const large = newEntry("step.completed", "s#0", { result: big("q"), attempt: 1 });
      const blobs = async () => Number((await db.sql<{ n: number }>(`SELECT count(*) AS n FROM ${db.t("blobs")}`))[0]!.n);
      const entries = async () => Number((await db.sql<{ n: number }>(`SELECT count(*) AS n FROM ${db.t("journal")} WHERE run_id = 'a1'`))[0]!.n);
      const before = await entries();

      // A stale epoch: refused, nothing written.
      expect(await store.commit([{ runId: "a1", epoch: run!.leaseEpoch + 1, entries: [large] }], 2000)).toEqual([{ ok: false, reason: "lease-lost" }]);
      // A write whose next entry fails (an inbox row that does not exist): the whole transaction rolls back.
      const bad = newEntry("event.received", "e#0", { type: "t", eventId: "x", payload: null, inboxId: 999_999 });
      await expect(store.commit([{ runId: "a1", epoch: run!.leaseEpoch, entries: [large, bad] }], 2000)).rejects.toThrow(/Inbox event 999999/);
      expect(await blobs()).toBe(0);
      expect(await entries()).toBe(before);

      // Accepted: the blob and its reference commit together, and garbage collection keeps it.
      expect((await store.commit([{ runId: "a1", epoch: run!.leaseEpoch, entries: [large] }], 3000))[0]).toMatchObject({ ok: true });
      expect(await blobs()).toBe(1);
      expect(await store.deleteUnreferencedBlobs(Number.MAX_SAFE_INTEGER)).toBe(0);
      // An unreferenced blob goes, once older than the grace time.
      await db.sql(`INSERT INTO ${db.t("blobs")} (hash, size, body, created_at, used_at) VALUES ('${"0".repeat(64)}', 1, 'x', 5, 5)`);
      expect(await store.deleteUnreferencedBlobs(4)).toBe(0);
      expect(await store.deleteUnreferencedBlobs(6)).toBe(1);
      expect(await blobs()).toBe(1);
      expect(JSON.parse((await store.readJournal("a1")).at(-1)!.payload)).toEqual({ result: big("q"), attempt: 1 });
    });
  });

  describe(`${name}: encrypted payloads`, () => {
    it("stores no plaintext of a secret payload anywhere in the database", async () => {
      const db = await open();
      const codec = aesGcmCodec({ keys: { k1: KEY1 }, currentKeyId: "k1" });
      const engine = await engineOn(db, { payloads: { codec } });
      const secret = "Sesame-7f3a9c";
      await runSecret(engine, "s1", secret);
      expect(await engine.result("s1")).toEqual({
        small: `${secret}-step`,
        large: 80_000,
        note: `${secret}-note`,
        answer: `${secret}-answer`,
        out: `${secret}-out`,
      });
      const journal = await engine.journal("s1");
      expect(journal.find((e) => e.opKey === "small#0" && e.kind === "step.completed")?.data).toMatchObject({ result: `${secret}-step` });
      expect((await engine.getRun("s1")).input).toEqual({ secret });
      expect(journal[0]).toMatchObject({ kind: "run.created", data: { workflow: "secret", input: { secret } } });
      const [answered] = await engine.listHumanRequests({ runId: "s1" });
      expect(answered?.answer).toContain(`${secret}-answer`);
      const dump = await db.dump();
      expect(dump.length).toBeGreaterThan(1000);
      expect(dump).toContain("step.completed"); // kinds, op keys and statuses stay in clear
      expect(dump).not.toContain(secret);
      expect(dump).not.toContain(secret.slice(0, 10));
    });

    it("exports plain payloads and imports them sealed with the importing store's key, losslessly", async () => {
      const source = await open();
      const exporter = await engineOn(source, { payloads: { codec: aesGcmCodec({ keys: { k1: KEY1 }, currentKeyId: "k1" }) } });
      const secret = "Export-4b1d2e";
      await runSecret(exporter, "x1", secret);
      const file = await exporter.exportRun("x1");
      const text = JSON.stringify(file);
      expect(text).toContain(`${secret}-out`);
      expect(text).toContain(big(secret, 80_000));
      expect(text).not.toContain('"$cairn"');

      const target = await open();
      const importer = await engineOn(target, { payloads: { codec: aesGcmCodec({ keys: { k2: KEY2 }, currentKeyId: "k2" }) } });
      await importer.importRun(JSON.parse(text) as unknown);
      expect(await importer.result("x1")).toEqual(await exporter.result("x1"));
      expect((await importer.journal("x1")).map((e) => e.data)).toEqual((await exporter.journal("x1")).map((e) => e.data));
      const again = await importer.exportRun("x1");
      expect({ ...again, exportedAt: 0 }).toEqual({ ...file, exportedAt: 0 });
      const dump = await target.dump();
      expect(dump).toContain("x1");
      expect(dump).not.toContain(secret);
    });

    it("seals outbox messages too and delivers them in plain text", async () => {
      const db = await open();
      const delivered: unknown[] = [];
      const codec = aesGcmCodec({ keys: { k1: KEY1 }, currentKeyId: "k1" });
      const engine = await engineOn(db, { payloads: { codec }, outbox: { handlers: { "secret.topic": (m) => void delivered.push(m.payload) } } });
      const secret = "Outbox-9c2e41";
      const worker = engine.startWorker({ pollInterval: 10 });
      await engine.start(emitFlow, { secret }, { runId: "o1" });
      await engine.result("o1", { timeoutMs: 15_000 });
      await waitFor(() => delivered.length === 1, { timeoutMs: 15_000, what: "the message delivered" });
      await worker.stop({ drain: true });
      expect(delivered).toEqual([{ note: `${secret}-message` }]);
      expect((await engine.listOutbox({ status: ["delivered"] }))[0]?.payload).toBe(encode({ note: `${secret}-message` }));
      const dump = await db.dump();
      expect(dump).toContain("secret.topic");
      expect(dump).not.toContain(secret);
    });

    it("reads old and new payloads after a key rotation; a missing key and a changed ciphertext are typed errors", async () => {
      const db = await open();
      const old = await engineOn(db, { payloads: { codec: aesGcmCodec({ keys: { k1: KEY1 }, currentKeyId: "k1" }) } });
      await runSecret(old, "old", "first-secret");
      const rotated = await engineOn(db, { payloads: { codec: aesGcmCodec({ keys: { k1: KEY1, k2: KEY2 }, currentKeyId: "k2" }) } });
      await runSecret(rotated, "new", "second-secret");
      expect(await rotated.result("old")).toMatchObject({ out: "first-secret-out" });
      expect(await rotated.result("new")).toMatchObject({ out: "second-secret-out" });
      expect((await rotated.journal("old")).length).toBeGreaterThan(5);
      const keyIds = async (runId: string) => {
        const rows = await db.sql<{ payload: string }>(`SELECT payload FROM ${db.t("journal")} WHERE run_id = '${runId}'`);
        return new Set(rows.map((row) => parseMarker(row.payload)).flatMap((m) => (m?.kind === "enc" ? [peekKeyId(Buffer.from(m.data, "base64"))] : [])));
      };
      expect(await keyIds("old")).toEqual(new Set(["k1"]));
      expect(await keyIds("new")).toEqual(new Set(["k2"]));

      // Without k1 the old run cannot be read, and the error names the key; the new run still can.
      const withoutK1 = await engineOn(db, { payloads: { codec: aesGcmCodec({ keys: { k2: KEY2 }, currentKeyId: "k2" }) } });
      const missing = await rejection(withoutK1.journal("old"));
      expect(missing.code).toBe("PAYLOAD_KEY_MISSING");
      expect(missing.message).toContain('"k1"');
      expect(await withoutK1.result("new")).toMatchObject({ out: "second-secret-out" });

      // One changed byte of a ciphertext fails authentication.
      const [row] = await db.sql<{ seq: number; payload: string }>(
        `SELECT seq, payload FROM ${db.t("journal")} WHERE run_id = 'new' AND op_key = 'small#0' AND kind = 'step.completed'`,
      );
      const marker = parseMarker(row!.payload) as { data: string };
      const bytes = Buffer.from(marker.data, "base64");
      bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 1;
      const tampered = `{"$cairn":"enc","v":"${bytes.toString("base64")}"}`;
      await db.sql(`UPDATE ${db.t("journal")} SET payload = '${tampered}' WHERE run_id = 'new' AND seq = ${Number(row!.seq)}`);
      const corrupt = await rejection(rotated.journal("new"));
      expect(corrupt.code).toBe("PAYLOAD_CORRUPT");
      expect(corrupt.message).toContain(`run "new" journal seq ${Number(row!.seq)}`);
      expect(isCairnError(corrupt)).toBe(true);
    });
  });
}
