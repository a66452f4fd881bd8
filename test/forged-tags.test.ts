import { webhookSignature } from "../src/engine/webhook-signature.js";
import Database from "better-sqlite3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { onCleanup, storeUrl } from "./support/engines.js";
import { testServer } from "./support/server.js";
import { taggedJson } from "./support/tagged-json.js";
import { createEngine } from "../src/engine/create-engine.js";
import { defineWorkflow } from "../src/engine/define-workflow.js";
import { silentLogger } from "../src/engine/logger.js";
import { waitFor } from "../src/testing/wait-for.js";
import type { ServerOptions } from "../src/server/options.js";

/** Values a user may send that look like the journal codec's tags or the payload layer's markers. */
const FORGED = {
  set: { $cairn: "set", v: 1 },
  date: { $cairn: "date", v: "not a time" },
  secret: { $cairn: "secret", v: "looks secret" },
  nested: { a: [{ $cairn: "map", v: [[1, 2]] }], b: { $cairn: { $cairn: "undef" } }, $cairn: "esc" },
  blob: { $cairn: "blob", sha256: "0".repeat(64), size: 3 },
  lit: { $cairn: "lit", v: "x\u001b[2J\u0007" },
};

/** Carries user JSON through every place it can enter a run: input, step output, event, answer, output. */
const echo = defineWorkflow({
  name: "echo",
  version: "1",
  async run(ctx, input: unknown) {
    const stepped = await ctx.step("copy", () => input);
    const event = await ctx.waitForEvent<unknown>("data");
    const reply = await ctx.askHuman({ name: "value", question: "Any value?" });
    return { input, stepped, event, answer: reply.value };
  },
});

const sign = (secret: string, body: string) => webhookSignature(secret, body, Math.floor(Date.now() / 1000));

async function setup(options: { webhooks?: ServerOptions["webhooks"] } = {}) {
  const url = storeUrl("sqlite");
  const engine = await createEngine({ store: url, workflows: [echo], logger: silentLogger });
  onCleanup(() => engine.close());
  const worker = engine.startWorker({ pollInterval: 10 });
  onCleanup(() => worker.stop());
  const server = await testServer(engine, options);
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text) as any };
  };
  /** Drives one echo run with `value` everywhere over HTTP and returns its output. */
  const drive = async (runId: string, value: unknown) => {
    const started = await call("POST", "/runs", { workflow: "echo", input: value, runId });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const sent = await call("POST", `/runs/${encodeURIComponent(runId)}/events`, { type: "data", payload: value });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const requestId = await waitFor(async () => (await engine.listHumanRequests({ runId, status: "pending" }))[0]?.requestId);
    const answered = await call("POST", `/human-requests/${encodeURIComponent(requestId)}/answer`, { action: "answer", value });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expect(answered.body.request.answer.value).toEqual(value);
    const listed = await call("GET", "/human-requests");
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    await waitFor(async () => (await engine.getRun(runId)).status === "completed");
    return (await call("GET", `/runs/${encodeURIComponent(runId)}`)).body;
  };
  return { engine, server, call, drive, path: url.slice("sqlite:".length) };
}

describe("user values shaped like codec tags", () => {
  it("are accepted and round-trip exactly through input, step output, event, answer and output over HTTP", async () => {
    const { call, drive } = await setup();
    for (const [name, value] of Object.entries(FORGED)) {
      const run = await drive(`forged-${name}`, value);
      expect(run.input).toEqual(value);
      expect(run.output).toEqual({ input: value, stepped: value, event: value, answer: value });
    }
    const runs = await call("GET", "/runs");
    expect(runs.status).toBe(200);
    expect(runs.body.runs.map((r: any) => r.status)).toEqual(Array(Object.keys(FORGED).length).fill("completed"));
    const journal = await call("GET", "/runs/forged-nested/journal");
    expect(journal.body.entries.find((e: any) => e.kind === "event.received").data.payload).toEqual(FORGED.nested);
  });

  it("any JSON (with $cairn keys at any depth) survives a real run exactly", async () => {
    const { drive } = await setup();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(taggedJson, async (value) => {
        const json = JSON.parse(JSON.stringify(value)) as unknown;
        const run = await drive(`prop-${n++}`, json);
        expect(run.input).toStrictEqual(json);
        expect(run.output).toStrictEqual({ input: json, stepped: json, event: json, answer: json });
      }),
      { numRuns: 12, seed: 2015 },
    );
  });

  it("round-trip through webhooks, fork patches, export/import and schedule inputs", async () => {
    const { engine, call, drive } = await setup({
      webhooks: { ci: { secret: "whsec", runId: (b: any) => b.run, type: "data", eventId: (b: any) => b.delivery, payload: (b: any) => b.data } },
    });
    const started = await call("POST", "/runs", { workflow: "echo", input: FORGED.set, runId: "hooked" });
    expect(started.status).toBe(201);
    const body = JSON.stringify({ run: "hooked", delivery: "d1", data: FORGED.nested });
    const hooked = await call("POST", "/webhooks/ci", body, { "cairn-signature": sign("whsec", body) });
    expect(hooked.status, JSON.stringify(hooked.body)).toBe(202);
    const requestId = await waitFor(async () => (await engine.listHumanRequests({ runId: "hooked", status: "pending" }))[0]?.requestId);
    expect((await call("POST", `/human-requests/${encodeURIComponent(requestId)}/answer`, { action: "answer", value: FORGED.secret })).status).toBe(200);
    await waitFor(async () => (await engine.getRun("hooked")).status === "completed");
    expect((await engine.getRun("hooked")).output).toEqual({ input: FORGED.set, stepped: FORGED.set, event: FORGED.nested, answer: FORGED.secret });

    // A fork whose patched step result is forged.
    await drive("orig", 1);
    const copySeq = (await engine.journal("orig")).find((e) => e.kind === "step.completed")!.seq;
    const fork = await call("POST", "/runs/orig/fork", { atSeq: copySeq, runId: "forked", patch: { seq: copySeq, result: FORGED.blob } });
    expect(fork.status, JSON.stringify(fork.body)).toBe(201);
    await call("POST", "/runs/forked/events", { type: "data", payload: FORGED.lit });
    const forkRequest = await waitFor(async () => (await engine.listHumanRequests({ runId: "forked", status: "pending" }))[0]?.requestId);
    await call("POST", `/human-requests/${encodeURIComponent(forkRequest)}/answer`, { action: "answer", value: FORGED.date });
    await waitFor(async () => (await engine.getRun("forked")).status === "completed");
    expect((await call("GET", "/runs/forked")).body.output).toEqual({ input: 1, stepped: FORGED.blob, event: FORGED.lit, answer: FORGED.date });

    // Export and import (as another id) keep every forged value.
    const exported = await call("GET", "/runs/hooked/export");
    expect(exported.status).toBe(200);
    const imported = await call("POST", "/runs/import?as=hooked-copy", exported.body);
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    expect((await call("GET", "/runs/hooked-copy")).body.output).toEqual((await call("GET", "/runs/hooked")).body.output);
    const received = (journal: any) => journal.body.entries.find((e: any) => e.kind === "event.received").data.payload;
    expect(received(await call("GET", "/runs/hooked-copy/journal"))).toEqual(FORGED.nested);

    // A schedule's input.
    await engine.schedule({ name: "forged", workflow: echo, cron: "0 * * * *", input: FORGED.nested });
    const schedules = await call("GET", "/schedules");
    expect(schedules.status).toBe(200);
    expect(schedules.body.schedules[0].input).toEqual(FORGED.nested);
  });
});

describe("one bad row", () => {
  it("is shown as a placeholder in listings, and the rest of the listing is unaffected", async () => {
    const { call, drive, path } = await setup();
    await drive("good", { ok: 1 });
    await drive("bad", { ok: 2 });
    await call("POST", "/runs", { workflow: "echo", input: "waiting", runId: "asking" });
    await call("POST", "/runs/asking/events", { type: "data", payload: 1 });
    await waitFor(async () => (await call("GET", "/human-requests?status=pending")).body.requests.length === 1);
    // Damage rows directly in the database, as a bad restore or a hand edit would.
    const db = new Database(path);
    db.prepare("UPDATE runs SET input = '{not json', output = '{\"$cairn\":\"set\",\"v\":1}' WHERE run_id = 'bad'").run();
    db.prepare("UPDATE human_requests SET answer = '{\"action\":' WHERE run_id = 'bad'").run();
    db.prepare("UPDATE human_requests SET context = '[[[' WHERE run_id = 'asking'").run();
    db.prepare('UPDATE journal SET payload = \'{"$cairn":"bigint","v":"zz"}\' WHERE run_id = \'good\' AND seq = 2').run();
    db.close();

    const runs = await call("GET", "/runs");
    expect(runs.status, JSON.stringify(runs.body)).toBe(200);
    const bad = runs.body.runs.find((r: any) => r.runId === "bad");
    expect(bad).toMatchObject({ runId: "bad", status: "completed", input: null, unreadable: expect.stringMatching(/^PAYLOAD_UNREADABLE: .*run "bad"/) });
    expect(bad.output).toBeUndefined();
    expect(runs.body.runs.find((r: any) => r.runId === "good")).toMatchObject({ input: { ok: 1 } });
    expect(runs.body.runs.find((r: any) => r.runId === "good").unreadable).toBeUndefined();

    const requests = await call("GET", "/human-requests");
    expect(requests.status, JSON.stringify(requests.body)).toBe(200);
    const byRun = Object.fromEntries(requests.body.requests.map((r: any) => [r.runId, r]));
    expect(byRun.bad).toMatchObject({ answer: null, unreadable: expect.stringMatching(/^PAYLOAD_UNREADABLE/) });
    expect(byRun.asking).toMatchObject({ context: null, status: "pending", unreadable: expect.stringMatching(/^PAYLOAD_UNREADABLE/) });
    expect(byRun.good).toMatchObject({ answer: { action: "answer", value: { ok: 1 } } });
    expect(byRun.good.unreadable).toBeUndefined();

    const journal = await call("GET", "/runs/good/journal");
    expect(journal.status, JSON.stringify(journal.body)).toBe(200);
    const [, second, third] = journal.body.entries;
    expect(second).toMatchObject({ seq: 2, data: null, unreadable: expect.stringMatching(/journal seq 2/) });
    expect(third.unreadable).toBeUndefined();
    expect(third.data).not.toBeNull();
  });
});
