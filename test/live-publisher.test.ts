import { describe, expect, it } from "vitest";
import { testEngine } from "./support/engines.js";
import { defineAgent } from "../src/agent/agent.js";
import { ScriptedModel } from "../src/agent/model/scripted.js";
import { waitFor } from "../src/testing/wait-for.js";

const TEXT = "Tides are caused by the moon pulling on the oceans.";

/**
 * An agent whose model answers word by word once `open()` is called: ten words 25 ms apart, so the
 * stream outlasts the publisher's first read of who streams the run and its first 50 ms flush. (At
 * 5 ms apart the whole answer could be journaled before anything was published; then, rightly,
 * nothing is written, not even an end, and the tests below waited for records that never came.)
 */
function gatedAgent() {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const agent = defineAgent({ name: "talker", model: () => new ScriptedModel([async () => (await gate, { content: TEXT })], { deltaDelayMs: 25 }) });
  return { agent, open };
}

describe.each(["memory", "sqlite"] as const)("a worker's live deltas in the store (%s)", (kind) => {
  it("writes nothing for a run no other process streams", async () => {
    const { agent, open } = gatedAgent();
    const engine = await testEngine(kind, { workflows: [agent] });
    engine.startWorker({ pollInterval: 10 });
    // A stream of this very engine (a server in the worker's process) gets deltas in memory, not through the store.
    await engine.store.advertiseLiveDeltas(engine.instanceId, ["quiet"], Date.now() + 60_000);
    await engine.start(agent, { prompt: "Why tides?" }, { runId: "quiet" });
    open();
    await engine.result("quiet", { timeoutMs: 10_000 });
    expect(await engine.store.readLiveDeltas(["quiet"], 0, "reader")).toEqual([]);
  });

  it("for a run another process streams: the output so far in a full record, then more, then an end once the outcome is journaled", async () => {
    const { agent, open } = gatedAgent();
    const engine = await testEngine(kind, { workflows: [agent] });
    engine.startWorker({ pollInterval: 10 });
    await engine.store.advertiseLiveDeltas("server-elsewhere", ["loud"], Date.now() + 60_000);
    await engine.start(agent, { prompt: "Why tides?" }, { runId: "loud" });
    open();
    await engine.result("loud", { timeoutMs: 10_000 });
    await waitFor(async () => (await engine.store.readLiveDeltas(["loud"], 0, "server-elsewhere")).some((r) => r.kind === "end"), {
      timeoutMs: 15_000,
      what: "the end record",
    });
    // The step's records went with its outcome; only the end is left.
    const left = await engine.store.readLiveDeltas(["loud"], 0, "server-elsewhere");
    expect(left.map((r) => [r.opKey, r.kind, r.origin])).toEqual([["turn#0/0/model#0", "end", engine.instanceId]]);
  });

  it("batches: a reader polling meanwhile rebuilds the text from a full record and fewer more records than pieces", async () => {
    const { agent, open } = gatedAgent();
    const engine = await testEngine(kind, { workflows: [agent] });
    engine.startWorker({ pollInterval: 10 });
    await engine.store.advertiseLiveDeltas("server-elsewhere", ["paced"], Date.now() + 60_000);
    await engine.start(agent, { prompt: "Why tides?" }, { runId: "paced" });
    const seen: Awaited<ReturnType<typeof engine.store.readLiveDeltas>> = [];
    let cursor = 0;
    let text = "";
    open();
    await waitFor(
      async () => {
        for (const record of await engine.store.readLiveDeltas(["paced"], cursor, "server-elsewhere")) {
          seen.push(record);
          cursor = record.id;
          if (record.kind === "full") text = "";
          for (const piece of record.pieces) text += (piece as { text: string }).text;
        }
        return seen.some((r) => r.kind === "end");
      },
      { timeoutMs: 10_000, what: "the step's records" },
    );
    expect(seen[0]!.kind).toBe("full");
    // The end deletes the step's records: a reader may miss the last ones (the journaled outcome replaces them).
    expect(text.length).toBeGreaterThan(0);
    expect(TEXT.startsWith(text)).toBe(true);
    const pieces = TEXT.match(/\S+\s*/g)!.length;
    expect(seen.filter((r) => r.kind !== "end").length).toBeLessThan(pieces);
  });
});
