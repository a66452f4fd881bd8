import { describe, expect, it } from "vitest";
import { sharedEngines, STORE_KINDS, testEngine } from "../../test/support/engines.js";
import type { Engine } from "../engine/engine.js";
import { waitFor } from "../testing/wait-for.js";
import { defineAgent } from "./agent.js";
import { textOf } from "./model/messages.js";
import type { Model } from "./model/model.js";
import { ScriptedModel } from "./model/scripted.js";
import { defineThread, sendToThread, type ThreadState } from "./thread.js";

const fast = { pollInterval: 10 };

describe.each(STORE_KINDS)("threads on %s", (kind) => {
  it("keeps a conversation across turns, restarts and duplicate sends", async () => {
    let calls = 0;
    // Answers with what it has heard so far: the user messages of the whole conversation.
    const model: Model = {
      provider: "scripted",
      modelId: "scripted",
      async generate(request) {
        calls += 1;
        const heard = request.messages.filter((m) => m.role === "user").map((m) => textOf(m.content as never));
        return new ScriptedModel([{ content: `heard: ${heard.join(", ")}` }], { cursor: "calls" }).generate(request);
      },
    };
    const agent = defineAgent({ name: "chat", model });
    const thread = defineThread(agent);
    const [one, two] = await sharedEngines(kind, [agent, thread], [agent, thread]);
    const worker = one!.startWorker(fast);
    const first = await sendToThread(one!, thread, "t1", "hello", { turnId: "1" });
    expect(first.runId).toBe("t1:1");
    expect((await first.result()).text).toBe("heard: hello");
    const again = await sendToThread(one!, thread, "t1", "hello", { turnId: "1" });
    expect((await again.result()).text).toBe("heard: hello");
    // The thread sleeps between messages; another worker picks the conversation up.
    await waitFor(async () => (await one!.getRun("t1")).status === "suspended");
    await worker.stop();
    two!.startWorker(fast);
    expect((await (await sendToThread(two!, thread, "t1", "how are you", { turnId: "2" })).result()).text).toBe("heard: hello, how are you");
    expect((await (await sendToThread(two!, thread, "t1", "bye", { turnId: "3" })).result()).text).toBe("heard: hello, how are you, bye");
    expect(calls).toBe(3);
    await two!.sendEvent("t1", "message", { close: true });
    const state = (await two!.result("t1", { timeoutMs: 5000 })) as ThreadState;
    expect(state.turns).toBe(3);
    expect(state.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant"]);
  });
});

/** A model that answers with the user messages it has heard, counting its calls. */
function hearingModel(): Model & { calls: number } {
  const model = {
    provider: "scripted",
    modelId: "scripted",
    calls: 0,
    async generate(request: Parameters<Model["generate"]>[0]) {
      model.calls += 1;
      const heard = request.messages.filter((m) => m.role === "user").map((m) => textOf(m.content as never));
      return new ScriptedModel([{ content: `heard: ${heard.join(", ")}` }], { cursor: "calls" }).generate(request);
    },
  };
  return model;
}

/** The bytes of a run's journal, payloads as stored (resolved). */
async function journalBytes(engine: Engine, runId: string): Promise<number> {
  return (await engine.store.readJournal(runId)).reduce((sum, entry) => sum + Buffer.byteLength(entry.payload), 0);
}

describe.each(STORE_KINDS)("threads that continue as new on %s", (kind) => {
  it("carries a conversation of 7 turns across runs of 2 turns: same history, turns found, duplicates dropped, chain linked", async () => {
    const model = hearingModel();
    const agent = defineAgent({ name: "chat", model });
    const thread = defineThread(agent, { continueAfterTurns: 2 });
    const engine = await testEngine(kind, { workflows: [agent, thread] });
    engine.startWorker(fast);
    const said: string[] = [];
    const turn = async (n: number) => {
      said.push(`m${n}`);
      const sent = await sendToThread(engine, thread, "t", `m${n}`, { turnId: String(n), timeoutMs: 10_000 });
      expect(sent.runId).toBe(`t:${n}`);
      return sent;
    };
    // Turns 1–3 one by one: message 3 is sent as run "t" continues (or just after).
    for (const n of [1, 2, 3]) expect((await (await turn(n)).result()).text).toBe(`heard: ${said.join(", ")}`);
    // Turns 4–6 sent at once: 5 and 6 wait in t~2's inbox while it runs turn 4, then move to t~3.
    const sends = [];
    for (const n of [4, 5, 6]) sends.push(await turn(n));
    for (const [i, sent] of sends.entries()) expect((await sent.result()).text).toBe(`heard: ${said.slice(0, 4 + i).join(", ")}`);
    // Duplicates of turns taken by earlier runs of the chain: nothing runs again, the result is the same.
    for (const n of [1, 3, 5]) {
      const again = await sendToThread(engine, thread, "t", `m${n}`, { turnId: String(n) });
      expect((await again.result()).text).toBe(`heard: ${said.slice(0, n).join(", ")}`);
    }
    // A turn id sent again under another event id (not sendToThread's) is dropped, the thread lives on.
    await engine.sendEvent("t", "message", { prompt: "m2", turnId: "2" }, { eventId: "raw-2" });
    expect((await (await turn(7)).result()).text).toBe(`heard: ${said.join(", ")}`);
    expect(model.calls).toBe(7);

    // The chain: t (turns 1–2) → t~2 (3–4) → t~3 (5–6) → t~4 (7), linked both ways.
    expect(await engine.getRun("t")).toMatchObject({ status: "completed", continuedTo: "t~2" });
    expect(await engine.getRun("t~2")).toMatchObject({ status: "completed", continuedFrom: "t", continuedTo: "t~3" });
    expect(await engine.getRun("t~3")).toMatchObject({ status: "completed", continuedFrom: "t~2", continuedTo: "t~4", input: { turns: 4, threadId: "t" } });
    const parents = await Promise.all([1, 2, 3, 4, 5, 6, 7].map(async (n) => (await engine.getRun(`t:${n}`)).parentRunId));
    expect(parents).toEqual(["t", "t", "t~2", "t~2", "t~3", "t~3", "t~4"]);
    // Each event was taken once, by the run that ran its turn (5 and 6 moved to t~3 if they reached t~2 first).
    const taken = async (runId: string) => (await engine.store.listInbox(runId)).map((e) => [e.eventId, e.consumedSeq !== null]);
    expect(await taken("t~3")).toEqual([
      ["turn:5", true],
      ["turn:6", true],
    ]);
    expect(await taken("t")).toEqual([
      ["turn:1", true],
      ["turn:2", true],
    ]);

    // Closing through the thread's id ends the live run; the thread's result follows the chain.
    await engine.sendEvent("t", "message", { close: true });
    const state = (await engine.result("t", { timeoutMs: 5000 })) as ThreadState;
    expect(state.turns).toBe(7);
    expect(state.messages.filter((m) => m.role === "user").map((m) => textOf(m.content as never))).toEqual(said);
  });

  it("replays a thread that took more turns than a limit set later exactly, then continues at the next turn", async () => {
    const model = hearingModel();
    const agent = defineAgent({ name: "chat", model });
    // The same thread before and after `continueAfterTurns` is set; a snapshot every 5 messages, so a
    // resume replays the 3 turns taken without it.
    const before = defineThread(agent, { snapshotEvery: 5 });
    const after = defineThread(agent, { snapshotEvery: 5, continueAfterTurns: 2 });
    const [one, two] = await sharedEngines(kind, [agent, before], [agent, after]);
    const worker = one!.startWorker(fast);
    for (const n of [1, 2, 3]) await (await sendToThread(one!, before, "t", `m${n}`, { turnId: String(n) })).result();
    await waitFor(async () => (await one!.getRun("t")).status === "suspended");
    await worker.stop();
    two!.startWorker(fast);
    // Message 4 wakes "t": it replays turns 1–3 as journaled, continues with all three, and t~2 takes it.
    expect((await (await sendToThread(two!, after, "t", "m4", { turnId: "4" })).result()).text).toBe("heard: m1, m2, m3, m4");
    expect(await two!.getRun("t")).toMatchObject({ status: "completed", continuedTo: "t~2" });
    expect((await two!.getRun("t:4")).parentRunId).toBe("t~2");
    expect(model.calls).toBe(4);
  });

  it("keeps each run's journal bounded with continueAfterTurns, while one run's grows with the conversation", async () => {
    // Replies of 1 KB; the agent summarizes its transcript when it passes its (small) window, so the
    // transcript a turn starts from is bounded either way: what remains is the thread run's own journal.
    const reply = "x".repeat(1000);
    const model: Model = {
      provider: "scripted",
      modelId: "scripted",
      async generate(request) {
        const summary = request.system?.startsWith("You compress") ?? false;
        return new ScriptedModel([{ content: summary ? "summary of the talk" : reply }], { cursor: "calls" }).generate(request);
      },
    };
    const agent = defineAgent({ name: "talk", model, context: { windowTokens: 2000, keepRecent: 2 } });
    const one = defineThread(agent, { name: "talk.one" });
    const chained = defineThread(agent, { name: "talk.chained", continueAfterTurns: 3 });
    const engine = await testEngine(kind, { workflows: [agent, one, chained] });
    engine.startWorker(fast);
    const turns = 12;
    // The last run of a chain, once it waits for the next message: the journals before it are final.
    const settled = async (threadId: string) => {
      let runId = threadId;
      await waitFor(async () => {
        for (let run = await engine.getRun(threadId); ; run = await engine.getRun(run.continuedTo!)) {
          runId = run.runId;
          // Suspended with no wake-up due: waiting for a message, not woken by its turn's end.
          if (!run.continuedTo) return run.status === "suspended" && run.wakeAt === null;
        }
      });
      return runId;
    };
    const single: number[] = [];
    for (let n = 1; n <= turns; n++) {
      await (await sendToThread(engine, one, "one", `q${n}`, { turnId: String(n) })).result();
      await (await sendToThread(engine, chained, "ch", `q${n}`, { turnId: String(n) })).result();
      await settled("one");
      single.push(await journalBytes(engine, "one"));
    }
    const last = await settled("ch");
    // Each run continues as soon as it took its third turn: the fifth waits for turn 13.
    expect(last).toBe("ch~5");
    const chain = await Promise.all(["ch", "ch~2", "ch~3", "ch~4"].map((runId) => journalBytes(engine, runId)));
    const perTurn = single.map((bytes, i) => bytes - (single[i - 1] ?? 0));
    // Without continuation the run's journal grows with every turn (by a bounded amount: the agent summarizes)...
    expect(Math.min(...perTurn)).toBeGreaterThan(1000);
    expect(single[turns - 1]!).toBeGreaterThan(turns * Math.min(...perTurn));
    // ...with it, no run of the chain holds more than its 3 turns and the transcript it started from.
    expect(Math.max(...chain)).toBeLessThanOrEqual(4 * Math.max(...perTurn));
    expect(single[turns - 1]!).toBeGreaterThan(2.5 * Math.max(...chain));
  });
});
