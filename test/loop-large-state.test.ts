/**
 * A `ctx.loop` whose state outgrows the payload inline limit: its snapshots go to blobs (and, with
 * a codec, are encrypted), and the run must still resume exactly, on every store. Each event wakes
 * the suspended run, so every iteration is a resume from the newest snapshot.
 */
import { describe, expect, it } from "vitest";
import type { PayloadOptions } from "../src/store/payloads/payload-store.js";
import { aesGcmCodec } from "../src/store/payloads/aes-gcm-codec.js";
import { createEngine } from "../src/engine/create-engine.js";
import { defineWorkflow } from "../src/engine/define-workflow.js";
import type { Engine } from "../src/engine/engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { waitFor } from "../src/testing/wait-for.js";
import { onCleanup, storeUrl } from "./support/engines.js";
import { durableStoreUrl, postgresReachable } from "./support/store-urls.js";

const KEY = Buffer.alloc(32, 7).toString("base64");

/** The reproduction: every event appends 1,000 characters to the loop's state. */
const growLoop = defineWorkflow({
  name: "grow-loop",
  version: "1",
  async run(ctx) {
    return ctx.loop(
      "msg",
      { items: [] as string[] },
      async (state, it) => {
        const event = await it.ctx.waitForEvent<{ i: number; stop?: boolean }>("m");
        if (event.stop) return it.done({ count: state.items.length, last: state.items.at(-1)?.slice(0, 12) ?? null });
        return { items: [...state.items, `${String(event.i).padStart(4, "0")}:${"x".repeat(995)}`] };
      },
      { snapshotEvery: 1 },
    );
  },
});

const pgUp = await postgresReachable();
const STORES = ["memory", "sqlite", ...(pgUp ? (["postgres"] as const) : [])] as const;

/** Payload settings: the default 64 KiB limit and a few KiB, with and without encryption. */
const SETTINGS: { name: string; events: number; crosses: boolean; payloads: () => PayloadOptions }[] = [
  { name: "default limit", events: 75, crosses: true, payloads: () => ({}) },
  { name: "4 KiB limit", events: 12, crosses: true, payloads: () => ({ inlineLimit: 4096 }) },
  {
    name: "4 KiB limit, encrypted",
    events: 12,
    crosses: true,
    payloads: () => ({ inlineLimit: 4096, codec: aesGcmCodec({ keys: { k: KEY }, currentKeyId: "k" }) }),
  },
  // Encrypted snapshots are markers too, below the limit: they failed from the second resume on.
  { name: "default limit, encrypted", events: 8, crosses: false, payloads: () => ({ codec: aesGcmCodec({ keys: { k: KEY }, currentKeyId: "k" }) }) },
];

async function engineOn(store: (typeof STORES)[number], payloads: PayloadOptions): Promise<Engine> {
  const url = store === "postgres" ? durableStoreUrl("postgres") : storeUrl(store);
  const engine = await createEngine({ store: url, workflows: [growLoop], logger: silentLogger, payloads });
  onCleanup(() => engine.close());
  return engine;
}

/** Sends event `i` and waits until the run consumed it and suspended again (or failed: then throws its error). */
async function feed(engine: Engine, runId: string, i: number, payload: { i: number; stop?: boolean }): Promise<void> {
  await engine.sendEvent(runId, "m", payload, { eventId: `e${i}` });
  await waitFor(
    async () => {
      const run = await engine.getRun(runId);
      if (run.status === "failed" || run.status === "dead") throw new Error(`failed after event ${i}: ${run.error?.code} ${run.error?.message}`);
      if (payload.stop) return run.status === "completed";
      return run.status === "suspended" && run.waitingFor.some((wait) => wait.opKey === `msg#0/${i + 1}/m#0`);
    },
    { timeoutMs: 20_000, intervalMs: 5, what: `the run to take event ${i}` },
  );
}

describe.each(STORES)("a loop whose state outgrows the inline limit, on %s", (store) => {
  it.each(SETTINGS)("resumes at every iteration past the limit ($name)", async ({ events, crosses, payloads }) => {
    const engine = await engineOn(store, payloads());
    engine.startWorker({ pollInterval: 10 });
    await engine.start(growLoop, {}, { runId: "g1" });
    for (let i = 0; i < events; i++) await feed(engine, "g1", i, { i });
    // Resume stays bounded: the store's read skips what the newest (offloaded or sealed) snapshot
    // supersedes — run.created, loop.started, the snapshot and the wait after it — not every iteration.
    const resumeRead = await engine.store.readJournalForResume("g1");
    expect(resumeRead.length).toBeLessThanOrEqual(8);
    expect(resumeRead.filter((entry) => entry.kind === "loop.snapshot")).toHaveLength(1);
    await feed(engine, "g1", events, { i: events, stop: true });
    expect(await engine.result("g1", { timeoutMs: 5000 })).toEqual({ count: events, last: `${String(events - 1).padStart(4, "0")}:xxxxxxx` });
    // The snapshots did cross the limit: the newest one was offloaded (or sealed) rather than inline.
    const journal = await engine.journal("g1");
    const snapshots = journal.filter((entry) => entry.kind === "loop.snapshot");
    expect(snapshots).toHaveLength(events);
    const limit = payloads().inlineLimit ?? 64 * 1024;
    if (crosses) expect(JSON.stringify(snapshots.at(-1)!.data).length).toBeGreaterThan(limit);
  });
});
