import { describe, expect, it } from "vitest";
import { z } from "zod";
import { STORE_KINDS, testEngine } from "../../test/support/engines.js";
import { waitFor } from "../testing/wait-for.js";
import { defineAgent, type AgentResult } from "./agent.js";
import { transcriptProblems } from "./model/messages.js";
import type { ModelRequest } from "./model/model.js";
import { ScriptedModel } from "./model/scripted.js";
import { defineTool } from "./tool.js";

const fast = { pollInterval: 10 };
const call = (id: string, name: string, input: unknown) => ({ type: "tool_use" as const, id, name, input: input as never });
const lastResults = (request: ModelRequest) => {
  const last = request.messages.at(-1);
  return last?.role === "tool" ? last.content : [];
};

/** A downstream service that applies each idempotency key's effect once, like a payment API. */
function dedupeLedger() {
  const seen = new Set<string>();
  const effects: string[] = [];
  return {
    effects,
    keys: [] as string[],
    apply(key: string, what: string) {
      this.keys.push(key);
      if (seen.has(key)) return "duplicate";
      seen.add(key);
      effects.push(what);
      return "applied";
    },
  };
}

describe.each(STORE_KINDS)("tool idempotency keys and approval notes on %s", (kind) => {
  it("gives distinct keys to calls of a provider that numbers ids per response (call_0 every turn), so a dedupe sees every effect", async () => {
    const ledger = dedupeLedger();
    const charge = defineTool({
      name: "charge",
      description: "Charges a card.",
      input: z.object({ cents: z.number() }),
      effect: "idempotent",
      run: ({ cents }, { idempotencyKey }) => ledger.apply(idempotencyKey, `charge ${cents}`),
    });
    const model = new ScriptedModel([
      { content: [call("call_0", "charge", { cents: 100 })] },
      { content: [call("call_0", "charge", { cents: 200 }), call("call_1", "charge", { cents: 300 })] },
      { content: [call("call_0", "charge", { cents: 400 })] },
      (request) => ({
        content: lastResults(request)
          .map((r) => r.content)
          .join(","),
      }),
    ]);
    const agent = defineAgent({ name: "biller", model, tools: [charge] });
    const engine = await testEngine(kind, { workflows: [agent] });
    engine.startWorker(fast);
    await engine.start(agent, { prompt: "charge" }, { runId: "k" });
    const result = (await engine.result("k", { timeoutMs: 5000 })) as AgentResult;
    expect(ledger.effects).toEqual(["charge 100", "charge 200", "charge 300", "charge 400"]);
    expect(ledger.keys).toEqual(["k:tool:0:call_0", "k:tool:1:call_0", "k:tool:1:call_1", "k:tool:2:call_0"]);
    expect(result.text).toBe("applied");
    expect(transcriptProblems(result.messages)).toEqual([]);
    // The key is journaled with the call's intent, so views show the key the tool really got.
    const intents = (await engine.journal("k")).filter((e) => e.kind === "step.started" && e.opKey?.includes("/tool-"));
    expect(intents.map((e) => (e.data as { intent: { idempotencyKey: string } }).intent.idempotencyKey)).toEqual(ledger.keys);
  });

  it("tells the model what ran after an approver edits or rejects a call, by whom and with their note, in a valid transcript", async () => {
    const ran: unknown[] = [];
    const transfer = defineTool({
      name: "transfer",
      description: "Moves money.",
      input: z.object({ to: z.string(), cents: z.number() }),
      effect: "unsafe",
      approval: true,
      run: (args) => {
        ran.push(args);
        return "done";
      },
    });
    let seen: ModelRequest | undefined;
    const model = new ScriptedModel([
      { content: [call("call_0", "transfer", { to: "bob", cents: 900 }), call("call_1", "transfer", { to: "eve", cents: 5 })] },
      (request) => {
        seen = request;
        return { content: "ok" };
      },
    ]);
    const agent = defineAgent({ name: "payer", model, tools: [transfer] });
    const engine = await testEngine(kind, { workflows: [agent] });
    engine.startWorker(fast);
    await engine.start(agent, { prompt: "pay" }, { runId: "p" });
    await waitFor(async () => (await engine.listHumanRequests({ status: "pending", runId: "p" })).length === 2, { what: "two approvals" });
    const requests = await engine.listHumanRequests({ status: "pending", runId: "p" });
    const id = (callId: string) => requests.find((r) => r.opKey.endsWith(`approve-${callId}#0`))!.requestId;
    await engine.respondToHuman(id("call_0"), { action: "answer", option: "edit", value: { to: "bob", cents: 90 }, by: "ada", message: "typo: 90 cents" });
    await engine.respondToHuman(id("call_1"), { action: "answer", option: "reject", by: "bo", message: "unknown payee" });
    const result = (await engine.result("p", { timeoutMs: 5000 })) as AgentResult;
    expect(result.text).toBe("ok");
    expect(ran).toEqual([{ to: "bob", cents: 90 }]);
    const [edited, rejected] = lastResults(seen!);
    expect(edited).toMatchObject({ toolUseId: "call_0" });
    expect(edited!.isError).toBeUndefined();
    expect(edited!.content).toBe(
      '[A person (ada) edited the arguments before the call ran; it ran with {"to":"bob","cents":90}. Their note: typo: 90 cents]\ndone',
    );
    expect(rejected).toMatchObject({
      toolUseId: "call_1",
      isError: true,
      content: "A person (bo) rejected this call; it did not run. Their note: unknown payee",
    });
    // The assistant's call keeps what the model sent: each call still has exactly one result, in order.
    const assistant = seen!.messages.find((m) => m.role === "assistant")!;
    expect(Array.isArray(assistant.content) && assistant.content[0]).toMatchObject({ id: "call_0", input: { to: "bob", cents: 900 } });
    expect(transcriptProblems(result.messages)).toEqual([]);
  });
});
