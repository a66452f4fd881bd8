import { describe, expect, it } from "vitest";
import { z } from "zod";
import { sharedEngines, STORE_KINDS } from "../../test/support/engines.js";
import { decode } from "../core/serialize.js";
import { waitFor } from "../testing/wait-for.js";
import { defineAgent, type AgentResult } from "./agent.js";
import type { ModelRequest } from "./model/model.js";
import { ScriptedModel } from "./model/scripted.js";
import { argumentsHash, defineTool } from "./tool.js";

const fast = { pollInterval: 10 };
const call = (id: string, name: string, input: unknown) => ({ type: "tool_use" as const, id, name, input: input as never });
const lastResult = (request: ModelRequest) => {
  const last = request.messages.at(-1);
  return last?.role === "tool" ? last.content[0]!.content : "";
};

/** An unsafe tool whose first call hangs until its worker dies: the intent is journaled, the outcome never. */
function hangingCharge(output?: z.ZodType<{ chargeId: string }>) {
  const ledger: string[] = [];
  const tool = defineTool({
    name: "charge_card",
    description: "Charges a card.",
    input: z.object({ card: z.string(), cents: z.number() }),
    effect: "unsafe",
    ...(output ? { output } : {}),
    run: ({ cents }, { idempotencyKey }) => {
      ledger.push(`charge ${cents} ${idempotencyKey}`);
      return new Promise<{ chargeId: string }>(() => {});
    },
  });
  return { tool, ledger };
}

describe.each(STORE_KINDS)("an interrupted unsafe tool call on %s", (kind) => {
  it("asks whether it happened with the tool, arguments, idempotency key and call id, and refuses skip without a valid value", async () => {
    const { tool, ledger } = hangingCharge(z.object({ chargeId: z.string() }));
    const model = () =>
      new ScriptedModel([{ content: [call("call_0", "charge_card", { card: "visa-4242", cents: 500 })] }, (r) => ({ content: lastResult(r) })]);
    const agent = defineAgent({ name: "charger", model, tools: [tool] });
    const [one, two] = await sharedEngines(kind, [agent], [agent]);
    const worker = one!.startWorker(fast);
    await one!.start(agent, { prompt: "charge" }, { runId: "c" });
    await waitFor(() => ledger.length === 1, { what: "the charge in flight" });
    await worker.stop({ drain: false });
    two!.startWorker(fast);
    await waitFor(async () => (await two!.listHumanRequests({ status: "pending", runId: "c" })).length === 1, { what: "the question" });
    const [question] = await two!.listHumanRequests({ status: "pending", runId: "c" });
    expect(question!.options).toEqual(["retry", "skip", "fail"]);
    expect(decode(question!.context!)).toEqual({
      tool: "charge_card",
      toolCallId: "call_0",
      idempotencyKey: "c:tool:0:call_0",
      arguments: { card: "visa-4242", cents: 500 },
      argumentsHash: argumentsHash({ card: "visa-4242", cents: 500 }),
    });
    expect(ledger).toEqual(["charge 500 c:tool:0:call_0"]);
    // "It happened" without saying what it returned would tell the model nothing (or "no charge").
    await expect(two!.respondToHuman(question!.requestId, { action: "skip" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining("give the result it returned"),
    });
    await expect(two!.respondToHuman(question!.requestId, { action: "skip", value: { charge: 1 } })).rejects.toThrow(/chargeId/);
    await two!.respondToHuman(question!.requestId, { action: "skip", value: { chargeId: "ch_1" }, by: "ops" });
    const result = (await two!.result("c", { timeoutMs: 5000 })) as AgentResult;
    expect(result.text).toBe('{"chargeId":"ch_1"}');
    expect(ledger).toHaveLength(1);
  });

  it("refuses skip without a value for a tool that declares no output schema, and takes any value", async () => {
    const { tool, ledger } = hangingCharge();
    const model = () => new ScriptedModel([{ content: [call("call_0", "charge_card", { card: "x", cents: 1 })] }, (r) => ({ content: lastResult(r) })]);
    const agent = defineAgent({ name: "charger2", model, tools: [tool] });
    const [one, two] = await sharedEngines(kind, [agent], [agent]);
    const worker = one!.startWorker(fast);
    await one!.start(agent, { prompt: "charge" }, { runId: "d" });
    await waitFor(() => ledger.length === 1, { what: "the charge in flight" });
    await worker.stop({ drain: false });
    two!.startWorker(fast);
    await waitFor(async () => (await two!.listHumanRequests({ status: "pending", runId: "d" })).length === 1, { what: "the question" });
    const [question] = await two!.listHumanRequests({ status: "pending", runId: "d" });
    await expect(two!.respondToHuman(question!.requestId, { action: "skip" })).rejects.toThrow(/skip means "it happened"/);
    await two!.respondToHuman(question!.requestId, { action: "skip", value: "charged by hand" });
    expect(((await two!.result("d", { timeoutMs: 5000 })) as AgentResult).text).toBe("charged by hand");
  });

  it("says zod 4 is required when given a zod 3 schema", () => {
    // The shape of a zod 3 schema: `_def` and `safeParse`, no zod 4 `_zod`.
    const zod3 = { _def: { typeName: "ZodObject" }, safeParse: () => ({ success: true }), parse: () => ({}) };
    expect(() => defineTool({ name: "t", description: "x", input: zod3 as never, effect: "none", run: () => 1 })).toThrow(/zod 4 \(or `zod\/v4`/);
    expect(() => defineTool({ name: "t", description: "x", input: {} as never, effect: "none", run: () => 1 })).toThrow(/must be a zod schema/);
  });
});
