import { describe, expect, it } from "vitest";
import type { EntryData } from "../../core/journal.js";
import { secret } from "../../core/secret.js";
import { decode, encode } from "../../core/serialize.js";
import type { Store } from "../../core/store.js";
import { T0, commitOk, entry, mustGet, newRun, startRun } from "./harness.js";

const turn0: EntryData["agent.messages"] = {
  messages: [
    { seq: 1, turn: 0, role: "user", content: "What limits solid-state batteries?" },
    {
      seq: 2,
      turn: 0,
      role: "assistant",
      content: [
        { type: "text", text: "Let me search." },
        { type: "tool_use", id: "c1", name: "search", input: { q: "dendrites" } },
        { type: "tool_use", id: "c2", name: "login", input: secret({ token: "s3cr3t-t0ken" }) },
      ],
    },
  ],
  toolCalls: [
    { idempotencyKey: "r:tool:0:c1", callId: "c1", tool: "search", turn: 0, status: "called", args: { q: "dendrites" } },
    { idempotencyKey: "r:tool:0:c2", callId: "c2", tool: "login", turn: 0, status: "called", args: secret({ token: "s3cr3t-t0ken" }) },
  ],
};
const results0: EntryData["agent.messages"] = {
  messages: [
    {
      seq: 3,
      turn: 0,
      role: "tool",
      content: [
        { type: "tool_result", toolUseId: "c1", content: "Dendrites short the cell." },
        { type: "tool_result", toolUseId: "c2", content: "denied", isError: true },
      ],
    },
  ],
  toolCalls: [
    { idempotencyKey: "r:tool:0:c1", callId: "c1", tool: "search", turn: 0, status: "completed", result: "Dendrites short the cell." },
    { idempotencyKey: "r:tool:0:c2", callId: "c2", tool: "login", turn: 0, status: "failed", result: "denied" },
  ],
};
const summary: EntryData["agent.messages"] = { messages: [{ seq: 4, turn: 1, role: "user", kind: "summary", content: "[Summary 1] dendrites." }] };

/** Writes the three agent entries of run `runId` (after its claim: journal seqs 3, 4 and 6). */
async function agentRun(store: Store, runId: string) {
  const run = await startRun(store, runId);
  await commitOk(store, run, [entry("agent.messages", "turn#0/0/messages#0", turn0), entry("step.started", "turn#0/0/tool-c1#0", { attempt: 1 })], T0 + 1);
  await commitOk(store, run, [entry("agent.messages", "turn#0/0/messages#1", results0), entry("step.started", "turn#0/1/model#0", { attempt: 1 })], T0 + 2);
  await commitOk(store, run, [entry("agent.messages", "turn#0/1/messages#0", summary)], T0 + 3);
  return mustGet(store, runId);
}

/** `agent_messages` and `tool_calls`: projections of `agent.messages` entries (docs/agent-messages.md). */
export function agentRowsSpec(store: () => Store): void {
  describe("agent rows", () => {
    it("projects messages and tool calls in the commit of their entry, JSON content as written, read by seq range", async () => {
      await agentRun(store(), "r");
      const rows = await store().readAgentMessages("r");
      expect(rows.map((m) => [m.seq, m.turn, m.role, m.kind, m.journalSeq, m.createdAt])).toEqual([
        [1, 0, "user", "message", 3, T0 + 1],
        [2, 0, "assistant", "message", 3, T0 + 1],
        [3, 0, "tool", "message", 5, T0 + 2],
        [4, 1, "user", "summary", 7, T0 + 3],
      ]);
      expect(rows[1]!.content).toBe(encode(turn0.messages[1]!.content));
      // Plain JSON anyone can parse; a secret keeps its tag, as in the journal, so views redact it.
      expect(JSON.parse(rows[0]!.content)).toBe("What limits solid-state batteries?");
      expect(rows[1]!.content).toContain('"$cairn":"secret"');
      expect(decode(rows[1]!.content)).toEqual([
        { type: "text", text: "Let me search." },
        { type: "tool_use", id: "c1", name: "search", input: { q: "dendrites" } },
        { type: "tool_use", id: "c2", name: "login", input: { token: "s3cr3t-t0ken" } },
      ]);
      expect((await store().readAgentMessages("r", { fromSeq: 2, throughSeq: 3 })).map((m) => m.seq)).toEqual([2, 3]);
      expect((await store().readAgentMessages("r", { fromSeq: 2, limit: 1 })).map((m) => m.seq)).toEqual([2]);
      expect(await store().readAgentMessages("r", { fromSeq: 5 })).toEqual([]);
      expect(await store().readAgentMessages("nobody")).toEqual([]);
    });

    it("keys tool calls by idempotency key: called with its arguments, then its result over it", async () => {
      const run = await startRun(store(), "r");
      await commitOk(store(), run, [entry("agent.messages", "turn#0/0/messages#0", turn0)], T0 + 1);
      const called = await store().listToolCalls("r");
      expect(called.map((c) => [c.idempotencyKey, c.callId, c.tool, c.turn, c.status, c.result, c.calledSeq, c.resultSeq])).toEqual([
        ["r:tool:0:c1", "c1", "search", 0, "called", null, 3, null],
        ["r:tool:0:c2", "c2", "login", 0, "called", null, 3, null],
      ]);
      expect(JSON.parse(called[0]!.args!)).toEqual({ q: "dendrites" });
      await commitOk(store(), run, [entry("agent.messages", "turn#0/0/messages#1", results0)], T0 + 2);
      const answered = await store().listToolCalls("r");
      expect(answered.map((c) => [c.idempotencyKey, c.status, c.calledSeq, c.resultSeq, c.createdAt, c.updatedAt])).toEqual([
        ["r:tool:0:c1", "completed", 3, 4, T0 + 1, T0 + 2],
        ["r:tool:0:c2", "failed", 3, 4, T0 + 1, T0 + 2],
      ]);
      expect(JSON.parse(answered[0]!.result!)).toBe("Dendrites short the cell.");
      expect(JSON.parse(answered[0]!.args!)).toEqual({ q: "dendrites" });
    });

    it("writes nothing when the commit is refused (stale epoch) or fails (a repeated message seq rolls back the whole write)", async () => {
      const run = await startRun(store(), "r");
      const [stale] = await store().commit(
        [{ runId: "r", epoch: run.leaseEpoch + 1, entries: [entry("agent.messages", "turn#0/0/messages#0", turn0)] }],
        T0 + 1,
      );
      expect(stale).toMatchObject({ ok: false, reason: "lease-lost" });
      expect(await store().readAgentMessages("r")).toEqual([]);
      expect(await store().listToolCalls("r")).toEqual([]);
      await commitOk(store(), run, [entry("agent.messages", "turn#0/0/messages#0", turn0)], T0 + 2);
      const before = await mustGet(store(), "r");
      await expect(
        store().commit(
          [
            {
              runId: "r",
              epoch: run.leaseEpoch,
              entries: [entry("agent.messages", "turn#0/0/messages#1", { ...results0, messages: [{ ...results0.messages[0]!, seq: 2 }] })],
            },
          ],
          T0 + 3,
        ),
      ).rejects.toThrow();
      expect((await mustGet(store(), "r")).lastSeq).toBe(before.lastSeq);
      expect((await store().readAgentMessages("r")).map((m) => m.seq)).toEqual([1, 2]);
      expect((await store().listToolCalls("r")).map((c) => c.status)).toEqual(["called", "called"]);
    });

    it("copies a fork's rows from its copied entries, and exports and imports them with the run", async () => {
      await agentRun(store(), "r");
      const journal = await store().readJournal("r");
      // A fork at the second agent entry: the summary (a later entry) is not copied.
      const copies = journal.slice(1, 5).map(({ runId: _, seq: __, ...copy }) => copy);
      await store().createRunWithJournal(newRun("fork"), copies, T0 + 10);
      expect((await store().readAgentMessages("fork")).map((m) => [m.seq, m.journalSeq])).toEqual([
        [1, 3],
        [2, 3],
        [3, 5],
      ]);
      expect((await store().listToolCalls("fork")).map((c) => [c.idempotencyKey, c.status])).toEqual([
        ["r:tool:0:c1", "completed"],
        ["r:tool:0:c2", "failed"],
      ]);
      const messages = await store().readAgentMessages("r");
      const calls = await store().listToolCalls("r");
      await commitOk(store(), await mustGet(store(), "r"), [entry("run.completed", null, { output: null })], T0 + 20);
      const rows = (await store().readRunRows("r"))!;
      expect(await store().deleteRuns([{ runId: "r", lastSeq: rows.run.lastSeq }])).toEqual(["r"]);
      expect(await store().readAgentMessages("r")).toEqual([]);
      expect(await store().listToolCalls("r")).toEqual([]);
      await store().importRun(rows);
      expect(await store().readAgentMessages("r")).toEqual(messages);
      expect((await store().listToolCalls("r")).map(({ createdAt: _, updatedAt: __, ...c }) => c)).toEqual(
        calls.map(({ createdAt: _, updatedAt: __, ...c }) => c),
      );
    });
  });
}
