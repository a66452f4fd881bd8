import { describe, expect, it } from "vitest";
import { sharedEngines, STORE_KINDS } from "../../test/support/engines.js";
import { approve, makeAgent, suspended, TURNS } from "../../test/support/tool-turn-agent.js";
import type { Engine } from "../engine/engine.js";
import type { Message } from "./model/schemas.js";
import { agentRunView } from "./transcript-view.js";

const rowsOf = async (engine: Engine, runId: string) => (await engine.store.readAgentMessages(runId)).map((r) => [r.seq, r.turn, r.role, r.kind, r.content]);
const callsOf = async (engine: Engine, runId: string) =>
  (await engine.store.listToolCalls(runId)).map((c) => [c.idempotencyKey.replace(/^[^:]+:/, ""), c.status, c.args, c.result]);

describe.each(STORE_KINDS)("compaction of an agent run on %s", (kind) => {
  it("compacted mid-conversation: rows, transcript and spend stay whole, and a resume elsewhere sends the model what the live twin sends", async () => {
    const live = makeAgent("compact-live");
    const compacted = makeAgent("compact-resumed");
    const [one, two] = await sharedEngines(kind, [live.agent, compacted.agent], [compacted.agent]);
    const worker = one!.startWorker({ pollInterval: 10 });
    await one!.start(live.agent, { prompt: "Look everything up." }, { runId: "live" });
    await one!.start(compacted.agent, { prompt: "Look everything up." }, { runId: "compacted" });
    await suspended(one!, "live");
    await suspended(one!, "compacted");

    const before = await one!.store.readJournal("compacted");
    const viewBefore = agentRunView(await one!.journal("compacted"));
    const rowsBefore = await rowsOf(one!, "compacted");
    const done = await one!.compact({ checkpointBefore: 0, runId: "compacted" });
    const after = await one!.store.readJournal("compacted");
    const bytes = (entries: typeof before) => entries.reduce((sum, e) => sum + Buffer.byteLength(e.payload), 0);
    console.log(
      `[compaction ${kind}] agent of ${TURNS} turns at its approval: ${before.length} entries / ${bytes(before)} B -> ${after.length} entries / ${bytes(after)} B`,
    );
    expect(done.entries).toBe(before.length - after.length);
    expect(done.entries).toBeGreaterThan(TURNS);
    // What the transcript and the costs are folded from stays: messages, model and tool calls.
    expect(after.filter((e) => e.kind === "agent.messages")).toHaveLength(before.filter((e) => e.kind === "agent.messages").length);
    const { coveredSeq } = (await one!.getCompaction("compacted"))!;
    expect(after.filter((e) => e.kind === "loop.snapshot" && e.seq < coveredSeq)).toEqual([]);
    expect(agentRunView(await one!.journal("compacted"))).toEqual(viewBefore);
    expect(await rowsOf(one!, "compacted")).toEqual(rowsBefore);
    expect(await one!.replay("compacted")).toMatchObject({ ok: true });

    // The live twin goes on where it ran; the compacted run resumes in a fresh engine.
    await approve(one!, "live");
    const liveResult = await one!.result<{ text: string; messages: Message[] }>("live", { timeoutMs: 60_000 });
    await worker.stop({ drain: true });
    await one!.close();
    two!.startWorker({ pollInterval: 10 });
    await approve(two!, "compacted");
    const result = await two!.result<{ text: string; messages: Message[] }>("compacted", { timeoutMs: 60_000 });
    expect(result.text).toBe("Done.");
    expect(result.messages).toEqual(liveResult.messages);
    expect(compacted.requests.at(-1)!.messages).toEqual(live.requests.at(-1)!.messages);
    expect(compacted.requests.length).toBe(live.requests.length);

    // The whole conversation, as rows and as `cairn show`'s transcript, is the twin's.
    expect(await rowsOf(two!, "compacted")).toEqual(await rowsOf(two!, "live"));
    expect(await callsOf(two!, "compacted")).toEqual(await callsOf(two!, "live"));
    const [mine, theirs] = [agentRunView(await two!.journal("compacted")), agentRunView(await two!.journal("live"))];
    // (Tool idempotency keys name the run: compared without it.)
    const unkeyed = (items: typeof mine.items) => JSON.parse(JSON.stringify(items).replace(/"(live|compacted):tool:/g, '"tool:')) as unknown;
    expect(unkeyed(mine.items)).toEqual(unkeyed(theirs.items));
    expect(mine.spend).toEqual(theirs.spend);
    expect(await two!.replay("compacted")).toMatchObject({ ok: true });
  });
});
