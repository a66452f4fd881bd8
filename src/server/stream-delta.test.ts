import { describe, expect, it } from "vitest";
import { testEngine } from "../../test/support/engines.js";
import { testServer } from "../../test/support/server.js";
import { defineAgent } from "../agent/agent.js";
import { ScriptedModel } from "../agent/model/scripted.js";
import { parseSse, type SseEvent } from "../client/sse.js";
import { CairnClient } from "../client/client.js";

const TEXT = "Tides are caused by the moon pulling on the oceans.";

/** An agent whose model answers (word by word) only once `open()` is called, so a test's stream cannot miss a delta. */
function gatedAgent() {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const agent = defineAgent({
    name: "talker",
    model: () => new ScriptedModel([async () => (await gate, { content: TEXT })], { deltaDelayMs: 5 }),
  });
  return { agent, open };
}

describe.each(["memory", "sqlite"] as const)("live model output in the stream (%s)", (kind) => {
  it("sends the model's text as deltas without ids, then the journaled step; reconnecting resumes by journal seq only", async () => {
    const { agent, open } = gatedAgent();
    const engine = await testEngine(kind, { workflows: [agent] });
    engine.startWorker({ pollInterval: 10 });
    const server = await testServer(engine, { streamPollMs: 60_000 });
    await engine.start(agent, { prompt: "Why tides?" }, { runId: "talk" });

    // A raw connection, following the run before the model answers: every event as sent.
    const res = await fetch(`${server.url}/runs/talk/stream`);
    const events: SseEvent[] = [];
    for await (const event of parseSse(res.body!)) {
      open();
      events.push(event);
      if (event.event === "end") break;
    }
    const modelEntry = events.findIndex(
      (e) =>
        e.event === "entry" &&
        (JSON.parse(e.data) as { kind: string; opKey: string }).opKey?.endsWith("/model#0") &&
        JSON.parse(e.data).kind === "step.completed",
    );
    const deltas = events.filter((e) => e.event === "delta");
    expect(deltas.length).toBeGreaterThan(3);
    for (const delta of deltas) expect(delta.id).toBeUndefined();
    const parsed = deltas.map((d) => JSON.parse(d.data) as { opKey: string; attempt: number; data: { kind: string; text: string } });
    expect(parsed.map((d) => d.data.text).join("")).toBe(TEXT);
    expect(new Set(parsed.map((d) => d.opKey))).toEqual(new Set(["turn#0/0/model#0"]));
    // Every delta came before the journaled outcome that replaces it.
    expect(modelEntry).toBeGreaterThan(events.lastIndexOf(deltas.at(-1)!));
    // Entries still carry their seqs, each once, in order.
    const seqs = events.filter((e) => e.event === "entry").map((e) => Number(e.id));
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));

    // Resuming after a seq sends the journal after it: no deltas are replayed (they were never journaled).
    const client = new CairnClient({ baseUrl: server.url });
    const resumed: number[] = [];
    const replayed: unknown[] = [];
    await client.stream("talk", { after: seqs[2]!, onEntry: (entry) => void resumed.push(entry.seq), onDelta: (delta) => void replayed.push(delta) });
    expect(resumed).toEqual(seqs.slice(3));
    expect(replayed).toEqual([]);
  });

  it("the client's onDelta gets the live text while the run goes on", async () => {
    const { agent: gated, open: following } = gatedAgent();
    const engine = await testEngine(kind, { workflows: [gated] });
    engine.startWorker({ pollInterval: 10 });
    const server = await testServer(engine);
    const client = new CairnClient({ baseUrl: server.url });
    await engine.start(gated, { prompt: "Why tides?" }, { runId: "talk2" });
    let text = "";
    let textWhenJournaled: string | undefined;
    await client.stream("talk2", {
      onDelta: (delta) => void (text += (delta.data as { text: string }).text),
      onEntry: (entry) => {
        following();
        if (entry.kind === "step.completed" && entry.opKey?.endsWith("/model#0")) textWhenJournaled = text;
      },
    });
    expect(textWhenJournaled).toBe(TEXT);
  });
});
