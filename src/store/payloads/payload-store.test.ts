import { describe, expect, it } from "vitest";
import { newEntry } from "../../core/journal.js";
import { blobRef } from "../../core/payloads.js";
import { decode, encode } from "../../core/serialize.js";
import { MemoryStore } from "../memory/memory-store.js";
import { aesGcmCodec } from "./aes-gcm-codec.js";
import { withPayloads } from "./payload-store.js";

const run = (runId: string, input: unknown) => ({ runId, workflow: "w", version: "1", input: encode(input) });

describe("withPayloads", () => {
  it("keeps a value that looks like a marker as it is", async () => {
    const inner = new MemoryStore();
    const store = withPayloads(inner);
    const lookalike = JSON.parse(blobRef("a".repeat(64), 3)) as unknown;
    await store.createRun(run("r", lookalike), 1);
    expect(decode((await store.getRun("r"))!.input)).toEqual(lookalike);
    // The codec escapes it, so it is never taken for a marker (and needs no `lit` wrapper).
    expect((await inner.getRun("r"))!.input).toMatch(/^\{"\$cairn":"esc"/);
    expect(decode<{ input: unknown }>((await store.readJournal("r"))[0]!.payload).input).toEqual(lookalike);
  });

  it("keeps a stored text that looks like a marker as a literal", async () => {
    const inner = new MemoryStore();
    const store = withPayloads(inner);
    const text = blobRef("a".repeat(64), 3);
    await store.createRun({ runId: "r", workflow: "w", version: "1", input: text }, 1);
    expect((await store.getRun("r"))!.input).toBe(text);
    expect((await inner.getRun("r"))!.input).toMatch(/^\{"\$cairn":"lit"/);
  });

  it("stores small payloads untouched without a codec (nothing to do on the hot path)", async () => {
    const inner = new MemoryStore();
    const store = withPayloads(inner, { codec: null });
    await store.createRun(run("r", { x: 1 }), 1);
    expect((await inner.readJournal("r"))[0]!.payload).toBe((await store.readJournal("r"))[0]!.payload);
    expect((await inner.getRun("r"))!.input).toBe(encode({ x: 1 }));
  });

  it("honours the inline limit and refuses a bad one", async () => {
    const inner = new MemoryStore();
    const store = withPayloads(inner, { inlineLimit: 10 });
    await store.createRun(run("r", "a longer input"), 1);
    expect((await inner.getRun("r"))!.input).toMatch(/^\{"\$cairn":"blob"/);
    expect(decode((await store.getRun("r"))!.input)).toBe("a longer input");
    expect((await store.readJournal("r"))[0]!.payload).toBe(encode({ workflow: "w", version: "1", input: "a longer input" }));
    expect(() => withPayloads(new MemoryStore(), { inlineLimit: -1 })).toThrow(/inlineLimit/);
  });

  it("names the key of an encrypted payload read without a codec", async () => {
    const inner = new MemoryStore();
    await withPayloads(inner, { codec: aesGcmCodec({ keys: { k9: Buffer.alloc(32, 1) }, currentKeyId: "k9" }) }).createRun(run("r", 1), 1);
    await expect(withPayloads(inner, { codec: null }).getRun("r")).rejects.toMatchObject({
      code: "PAYLOAD_KEY_MISSING",
      message: expect.stringContaining('"k9"'),
    });
  });

  it("seals agent message and tool call rows with the codec, opens them on read, and offloads nothing a fork copies", async () => {
    const inner = new MemoryStore();
    const store = withPayloads(inner, { codec: aesGcmCodec({ keys: { k1: Buffer.alloc(32, 2) }, currentKeyId: "k1" }), inlineLimit: 64 });
    await store.createRun({ ...run("r", "go"), workflow: "solo" }, 1);
    const [claimed] = await store.claimRuns({ workerId: "w", now: 2, leaseMs: 30_000, limit: 1, workflows: [{ name: "solo", version: "1" }] });
    const data = {
      messages: [{ seq: 1, turn: 0, role: "assistant" as const, content: [{ type: "text", text: "the confidential plan, long enough to go to a blob" }] }],
      toolCalls: [{ idempotencyKey: "r:tool:0:c1", callId: "c1", tool: "search", turn: 0, status: "called" as const, args: { q: "confidential" } }],
    };
    const [ok] = await store.commit([{ runId: "r", epoch: claimed!.leaseEpoch, entries: [newEntry("agent.messages", "turn#0/0/messages#0", data)] }], 3);
    expect(ok).toMatchObject({ ok: true });
    const raw = await inner.readAgentMessages("r");
    expect(raw[0]!.content).toMatch(/^\{"\$cairn":"enc"/);
    expect(JSON.stringify(await inner.listToolCalls("r"))).not.toContain("confidential");
    expect(decode((await store.readAgentMessages("r"))[0]!.content)).toEqual(data.messages[0]!.content);
    expect(decode((await store.listToolCalls("r"))[0]!.args)).toEqual({ q: "confidential" });
    // A fork copies the entry's plain payload from a read; its rows are projected (and sealed) all the same.
    const journal = await store.readJournal("r");
    await store.createRunWithJournal(
      run("fork", "go"),
      journal.slice(1).map(({ runId: _, seq: __, ...copy }) => copy),
      4,
    );
    expect((await inner.readAgentMessages("fork"))[0]!.content).toMatch(/^\{"\$cairn":"enc"/);
    expect(decode((await store.readAgentMessages("fork"))[0]!.content)).toEqual(data.messages[0]!.content);
  });

  it("with the codec, fills a tool call's arguments and result in from the message blocks before sealing them (records that leave them out)", async () => {
    const inner = new MemoryStore();
    const store = withPayloads(inner, { codec: aesGcmCodec({ keys: { k1: Buffer.alloc(32, 2) }, currentKeyId: "k1" }) });
    await store.createRun({ ...run("r", "go"), workflow: "solo" }, 1);
    const [claimed] = await store.claimRuns({ workerId: "w", now: 2, leaseMs: 30_000, limit: 1, workflows: [{ name: "solo", version: "1" }] });
    const called = {
      messages: [{ seq: 1, turn: 0, role: "assistant" as const, content: [{ type: "tool_use", id: "c1", name: "search", input: { q: "confidential" } }] }],
      toolCalls: [{ idempotencyKey: "r:tool:0:c1", callId: "c1", tool: "search", turn: 0, status: "called" as const }],
    };
    const answered = {
      messages: [{ seq: 2, turn: 0, role: "tool" as const, content: [{ type: "tool_result", toolUseId: "c1", content: "the confidential answer" }] }],
      toolCalls: [{ idempotencyKey: "r:tool:0:c1", callId: "c1", tool: "search", turn: 0, status: "completed" as const }],
    };
    const entries = [newEntry("agent.messages", "turn#0/0/messages#0", called), newEntry("agent.messages", "turn#0/0/messages#1", answered)];
    const [ok] = await store.commit([{ runId: "r", epoch: claimed!.leaseEpoch, entries }], 3);
    expect(ok).toMatchObject({ ok: true });
    expect(JSON.stringify(await inner.listToolCalls("r"))).not.toContain("confidential");
    const [call] = await store.listToolCalls("r");
    expect([call!.status, decode(call!.args), decode(call!.result)]).toEqual(["completed", { q: "confidential" }, "the confidential answer"]);
    // A fork projects the same from the copied entries.
    const journal = await store.readJournal("r");
    await store.createRunWithJournal(
      run("fork", "go"),
      journal.slice(1).map(({ runId: _, seq: __, ...copy }) => copy),
      4,
    );
    const [forked] = await store.listToolCalls("fork");
    expect([forked!.status, decode(forked!.args), decode(forked!.result)]).toEqual(["completed", { q: "confidential" }, "the confidential answer"]);
  });

  it("passes methods it does not know through, and wraps a store once", async () => {
    class Extended extends MemoryStore {
      extra(): string {
        return `extra of ${this.url}`;
      }
    }
    const store = withPayloads(new Extended()) as Extended;
    expect(store.extra()).toBe("extra of memory:");
    expect(withPayloads(store)).toBe(store);
  });
});

describe("withPayloads and search", () => {
  it("still finds a step result's search text when its payload is encrypted (the text is indexed as given)", async () => {
    const inner = new MemoryStore();
    const store = withPayloads(inner, { codec: aesGcmCodec({ keys: { k: Buffer.alloc(32, 3) }, currentKeyId: "k" }) });
    await store.createRun(run("r", null), 1);
    const [claimed] = await store.claimRuns({ workerId: "w", now: 2, leaseMs: 1000, limit: 1, workflows: [{ name: "w", version: "1" }] });
    const done = newEntry("step.completed", "s#0", { result: "secret result", attempt: 1, text: "ceramic electrolyte" });
    await store.commit([{ runId: "r", epoch: claimed!.leaseEpoch, entries: [done] }], 3);
    expect((await inner.readJournal("r")).at(-1)!.payload).toMatch(/^\{"\$cairn":"enc"/);
    expect(await store.searchJournal("r", "electrolyte", 5)).toEqual([{ seq: 3, opKey: "s#0", text: "ceramic electrolyte" }]);
  });
});
