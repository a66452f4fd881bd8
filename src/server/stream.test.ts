import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { onCleanup, tempDir } from "../../test/support/engines.js";
import { TEST_WORKFLOWS, testServer } from "../../test/support/server.js";
import { createEngine } from "../engine/create-engine.js";
import type { Engine } from "../engine/engine.js";
import { silentLogger } from "../engine/logger.js";
import { parseSse, type SseEvent } from "../client/sse.js";
import { waitFor } from "../testing/wait-for.js";

/** An engine with a worker on `store`; `close()` stops the worker too. Closed after the test. */
async function openEngine(store: string): Promise<Engine> {
  const engine = await createEngine({ store, workflows: TEST_WORKFLOWS, logger: silentLogger });
  engine.startWorker({ pollInterval: 10 });
  onCleanup(() => engine.close());
  return engine;
}

/** Reads SSE events from a raw connection until `until` says stop, then drops the connection. */
async function readEvents(url: string, headers: Record<string, string>, until: (events: SseEvent[]) => boolean): Promise<SseEvent[]> {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  const events: SseEvent[] = [];
  try {
    for await (const event of parseSse(res.body!)) {
      events.push(event);
      if (until(events)) break;
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  } finally {
    controller.abort();
  }
  return events;
}

const seqs = (events: SseEvent[]) => events.filter((e) => e.event === "entry").map((e) => Number(e.id));

describe("GET /runs/:id/stream", () => {
  it("resumes with Last-Event-ID and ?after across a server restart on the same SQLite file: every entry once, in order", async () => {
    const store = `sqlite:${join(tempDir(), "cairn.db")}`;
    let engine = await openEngine(store);
    let server = await testServer(engine);
    await engine.start("paced", { steps: 4 }, { runId: "s" });
    await waitFor(async () => (await engine.getRun("s")).status === "suspended");

    // First connection: take three entries, then drop it mid-run.
    const first = await readEvents(`${server.url}/runs/s/stream`, {}, (events) => seqs(events).length >= 3);
    expect(seqs(first)).toEqual([1, 2, 3]);
    const lastId = first.filter((e) => e.event === "entry").at(-1)!.id!;

    // Progress while nobody listens, then restart: close server and engine, reopen the same file.
    await engine.sendEvent("s", "go", null, { eventId: "g1" });
    await waitFor(async () => (await engine.getRun("s")).entries > 8);
    await server.close();
    await engine.close();
    engine = await openEngine(store);
    server = await testServer(engine);

    // Second connection resumes from Last-Event-ID; the run goes on while it listens.
    const second = readEvents(`${server.url}/runs/s/stream`, { "last-event-id": lastId }, (events) => seqs(events).length >= 6);
    await engine.sendEvent("s", "go", null, { eventId: "g2" });
    const got2 = await second;
    const resumeAt = seqs(got2).at(-1)!;

    // Third connection by ?after (as a client without Last-Event-ID would), to the end.
    const finishing = (async () => {
      for (const id of ["g3", "g4"]) {
        await waitFor(async () => (await engine.getRun("s")).status === "suspended");
        await engine.sendEvent("s", "go", null, { eventId: id });
      }
    })();
    const third = await readEvents(`${server.url}/runs/s/stream?after=${resumeAt}`, {}, (events) => events.some((e) => e.event === "end"));
    await finishing;
    const journal = await engine.journal("s");
    const received = [...first, ...got2, ...third].filter((e) => e.event === "entry");
    expect(received.map((e) => Number(e.id))).toEqual(journal.map((e) => e.seq));
    expect(received.map((e) => JSON.parse(e.data).kind)).toEqual(journal.map((e) => e.kind));
    const end = third.find((e) => e.event === "end")!;
    expect(JSON.parse(end.data)).toEqual({ status: "completed", lastSeq: journal.at(-1)!.seq });
    expect(third.at(-1)!.event).toBe("end");
  });

  it("a client dropped at random points (seeded), once across a server restart, still sees every entry once, in order", async () => {
    // A small seeded generator: the same disconnect points on every run of the test.
    let seed = 20261122;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const store = `sqlite:${join(tempDir(), "cairn.db")}`;
    let engine = await openEngine(store);
    let server = await testServer(engine);
    await engine.start("paced", { steps: 12 }, { runId: "rnd" });
    // The run advances on its own while the client comes and goes.
    let stopPacing = false;
    const pacing = (async () => {
      for (let i = 0; i < 12 && !stopPacing; i++) {
        await waitFor(async () => stopPacing || (await engine.getRun("rnd")).status === "suspended", { timeoutMs: 20_000 });
        if (stopPacing) return;
        await engine.sendEvent("rnd", "go", null, { eventId: `go-${i}` }).catch(() => undefined);
      }
    })();
    const received: SseEvent[] = [];
    let last: string | undefined;
    let restarted = false;
    for (let connection = 0; connection < 60; connection++) {
      const take = 1 + Math.floor(random() * 4);
      const headers: Record<string, string> = last === undefined ? {} : { "last-event-id": last };
      const events = await readEvents(`${server.url}/runs/rnd/stream`, headers, (got) => seqs(got).length >= take || got.some((e) => e.event === "end"));
      received.push(...events);
      const entries = events.filter((e) => e.event === "entry");
      if (entries.length > 0) last = entries.at(-1)!.id!;
      if (events.some((e) => e.event === "end")) break;
      if (!restarted && received.length > 15) {
        // Once, mid-run: the server and engine go away and come back on the same file.
        restarted = true;
        stopPacing = true;
        await pacing;
        await server.close();
        await engine.close();
        engine = await openEngine(store);
        server = await testServer(engine);
        stopPacing = false;
        void (async () => {
          for (let i = 0; i < 12; i++) {
            const run = await engine.getRun("rnd").catch(() => undefined);
            if (!run || run.status === "completed") return;
            await waitFor(async () => ["suspended", "completed"].includes((await engine.getRun("rnd")).status), { timeoutMs: 20_000 });
            await engine.sendEvent("rnd", "go", null, { eventId: `again-${i}` }).catch(() => undefined);
          }
        })();
      }
    }
    expect(restarted).toBe(true);
    await engine.result("rnd", { timeoutMs: 20_000 });
    const journal = await engine.journal("rnd");
    const entries = received.filter((e) => e.event === "entry");
    expect(entries.map((e) => Number(e.id))).toEqual(journal.map((e) => e.seq));
    expect(received.at(-1)!.event).toBe("end");
  }, 60_000);

  it("a stream of a finished run sends what is after the cursor and ends; an idle one sends keep-alive comments", async () => {
    const store = `sqlite:${join(tempDir(), "cairn.db")}`;
    const engine = await openEngine(store);
    const server = await testServer(engine, { keepAliveMs: 50 });
    await engine.start("paced", { steps: 1 }, { runId: "f" });
    await waitFor(async () => (await engine.getRun("f")).status === "suspended");
    const res = await fetch(`${server.url}/runs/f/stream?after=1`);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes(": keep-alive")) text += (await reader.read()).value ?? "";
    await reader.cancel();
    expect(text).toMatch(/^retry: 1000\n\n/);
    expect(text).not.toContain("id: 1\n");
    await engine.sendEvent("f", "go");
    await engine.result("f", { timeoutMs: 10_000 });
    const total = (await engine.getRun("f")).entries;
    const events = await readEvents(`${server.url}/runs/f/stream`, { "last-event-id": String(total - 2) }, () => false);
    expect(events.map((e) => e.event)).toEqual(["entry", "entry", "end"]);
    expect(seqs(events)).toEqual([total - 1, total]);
  });

  it("wakes at once when this process's worker commits, without waiting for the next poll", async () => {
    const store = `sqlite:${join(tempDir(), "cairn.db")}`;
    const engine = await openEngine(store);
    // A poll interval far beyond the test's time: only a push can deliver the new entries in time.
    const server = await testServer(engine, { streamPollMs: 120_000, keepAliveMs: 120_000 });
    await engine.start("paced", { steps: 2 }, { runId: "push" });
    await waitFor(async () => (await engine.getRun("push")).status === "suspended");
    const before = (await engine.getRun("push")).entries;
    let sent = false;
    const started = Date.now();
    const events = await readEvents(`${server.url}/runs/push/stream`, {}, (events) => {
      if (!sent && seqs(events).at(-1) === before) {
        sent = true;
        void engine.sendEvent("push", "go");
      }
      return events.some((e) => e.event === "entry" && (JSON.parse(e.data) as { kind: string }).kind === "event.received");
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(seqs(events)).toEqual(Array.from({ length: seqs(events).length }, (_, i) => i + 1));
    expect(seqs(events).length).toBeGreaterThan(before);
  });
});
