/**
 * Every journaled value a run reads back on replay, past the payload inline limit: a step result, an
 * event payload, a child's output, a person's answer and a loop's result, each larger than the limit
 * (so stored as a blob, and sealed with a codec), each delivered again on every later resume. The
 * run suspends after each one, so each is replayed from its stored form several times.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createEngine } from "../src/engine/create-engine.js";
import { defineWorkflow } from "../src/engine/define-workflow.js";
import type { Engine } from "../src/engine/engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { aesGcmCodec } from "../src/store/payloads/aes-gcm-codec.js";
import { waitFor } from "../src/testing/wait-for.js";
import { onCleanup, storeUrl } from "./support/engines.js";
import { durableStoreUrl, postgresReachable } from "./support/store-urls.js";

const LIMIT = 512;
const SIZE = 3000;
const KEY = Buffer.alloc(32, 5).toString("base64");
const digest = (value: unknown) => createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16);
const text = (seed: string) => seed.repeat(SIZE);

const bigChild = defineWorkflow({
  name: "big-child",
  version: "1",
  async run(ctx, input: { seed: string }) {
    return ctx.step("make", () => ({ body: text(input.seed) }));
  },
});

const paths = defineWorkflow({
  name: "paths",
  version: "1",
  async run(ctx) {
    const step = await ctx.step("step", () => ({ body: text("s") }));
    const event = await ctx.waitForEvent<{ body: string }>("doc");
    const child = await ctx.child(bigChild, { seed: "c" });
    const answer = await ctx.askHuman<{ body: string }>({ name: "review", question: "Looks right?", options: ["yes"] });
    const loop = await ctx.loop("sum", 0, async (n, it) => (n === 2 ? it.done({ body: text("l"), n }) : n + 1), { snapshotEvery: 1 });
    await ctx.waitForEvent("end");
    return [step, event, child, answer.value, loop].map((value) => ({ length: JSON.stringify(value).length, digest: digest(value) }));
  },
});

const expected = [{ body: text("s") }, { body: text("e") }, { body: text("c") }, { body: text("h") }, { body: text("l"), n: 2 }].map((value) => ({
  length: JSON.stringify(value).length,
  digest: digest(value),
}));

const pgUp = await postgresReachable();
const STORES = ["memory", "sqlite", ...(pgUp ? (["postgres"] as const) : [])] as const;

async function engineOn(store: (typeof STORES)[number], encrypted: boolean): Promise<Engine> {
  const url = store === "postgres" ? durableStoreUrl("postgres") : storeUrl(store);
  const codec = encrypted ? aesGcmCodec({ keys: { k: KEY }, currentKeyId: "k" }) : null;
  const engine = await createEngine({ store: url, workflows: [paths, bigChild], logger: silentLogger, payloads: { inlineLimit: LIMIT, codec } });
  onCleanup(() => engine.close());
  return engine;
}

async function waitingOn(engine: Engine, opKey: string): Promise<void> {
  await waitFor(
    async () => {
      const run = await engine.getRun("p");
      if (run.status === "failed" || run.status === "dead") throw new Error(`${run.error?.code}: ${run.error?.message}`);
      return run.status === "suspended" && run.waitingFor.some((wait) => wait.opKey === opKey);
    },
    { timeoutMs: 20_000, what: `the run to wait at ${opKey}` },
  );
}

describe.each(STORES)("journaled values past the inline limit, on %s", (store) => {
  it.each([false, true])("are read back exactly on every resume (encrypted: %s)", async (encrypted) => {
    const engine = await engineOn(store, encrypted);
    engine.startWorker({ pollInterval: 10 });
    await engine.start(paths, undefined, { runId: "p" });
    await waitingOn(engine, "doc#0");
    await engine.sendEvent("p", "doc", { body: text("e") }, { eventId: "doc" });
    await waitingOn(engine, "review#0");
    await engine.respondToHuman("p:review#0", { action: "answer", option: "yes", value: { body: text("h") }, by: "tester" });
    await waitingOn(engine, "end#0");
    await engine.sendEvent("p", "end", {}, { eventId: "end" });
    expect(await engine.result("p", { timeoutMs: 10_000 })).toEqual(expected);
  });
});
