/**
 * `cairn show <run>` prints what the run cost beyond its model calls: worker time over its claims,
 * journal entries and bytes, tool calls by tool and the time a person took, as the journal holds
 * them; `--json` has the same figures under `costs`. Needs the built CLI (`npm run build`).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { runCli } from "../../test/support/cli.js";
import { onCleanup, tempDir } from "../../test/support/engines.js";
import { defineAgent } from "../agent/agent.js";
import { ScriptedModel } from "../agent/model/scripted.js";
import type { RunCosts } from "../agent/run-costs.js";
import { defineTool } from "../agent/tool.js";
import { createEngine } from "../engine/create-engine.js";
import { silentLogger } from "../engine/logger.js";
import { waitFor } from "../testing/wait-for.js";

const call = (id: string, name: string, input: unknown) => ({ type: "tool_use" as const, id, name, input: input as never });

function makeAgent() {
  const lookup = defineTool({ name: "lookup", description: "Looks up.", input: z.object({ q: z.string() }), effect: "none", run: ({ q }) => `found ${q}` });
  const deploy = defineTool({
    name: "deploy",
    description: "Deploys.",
    input: z.object({ env: z.string() }),
    effect: "idempotent",
    approval: true,
    run: ({ env }) => `deployed to ${env}`,
  });
  const model = new ScriptedModel([
    { content: [call("c1", "lookup", { q: "a" }), call("c2", "lookup", { q: "b" }), call("c3", "deploy", { env: "prod" })] },
    { content: "All done." },
  ]);
  return defineAgent({ name: "costly", model, tools: [lookup, deploy] });
}

describe("cairn show: a run's costs beyond its model calls", () => {
  it("prints worker time, journal size, tool calls by tool and people's time as the journal holds them", async () => {
    const dir = tempDir();
    const store = `sqlite:${join(dir, "cairn.db")}`;
    const agent = makeAgent();
    const engine = await createEngine({ store, workflows: [agent], logger: silentLogger });
    onCleanup(() => engine.close());
    engine.startWorker({ pollInterval: 10 });
    const run = await engine.start(agent, { prompt: "Ship it" }, { runId: "ship" });
    const [approval] = await waitFor(async () => {
      const pending = await engine.listHumanRequests({ status: "pending", runId: "ship" });
      return pending.length === 1 && pending;
    });
    // A person takes their time (well over the 1 s the printout rounds to a tenth of).
    await waitFor(() => Date.now() - approval!.createdAt >= 1300 && true, { what: "a person's pause", timeoutMs: 5000 });
    await engine.respondToHuman(approval!.requestId, { action: "answer", option: approval!.options[0]! });
    await run.result({ timeoutMs: 10_000 });

    // What the store holds, read here from the journal.
    const stored = await engine.store.readJournal("ship", { afterSeq: 0, limit: 10_000 });
    const bytes = stored.reduce((sum, entry) => sum + Buffer.byteLength(entry.payload), 0);
    const views = await engine.journal("ship");
    const at = (kind: string) => views.filter((entry) => entry.kind === kind).map((entry) => entry.at.getTime());
    const waitedMs = at("human.answered")[0]! - at("human.requested")[0]!;
    expect(waitedMs).toBeGreaterThanOrEqual(1300);
    expect(at("run.claimed")).toHaveLength(2); // started, then resumed after the answer
    await engine.close();

    const shown = await runCli(["show", "ship", "--store", store], { cwd: dir });
    expect(shown.code, shown.stderr).toBe(0);
    const costs = shown.stdout.slice(shown.stdout.lastIndexOf("\nCosts\n"));
    expect(costs).toMatch(/^\s+worker time\s+\d+(\.\d)? (ms|s) over 2 claims; steps \d+(\.\d)? (ms|s) in \d+ attempts$/m);
    const kib = bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KiB`;
    expect(costs).toContain(`journal       ${stored.length} entries, ${kib}`);
    expect(costs).toContain("tool calls    deploy ×1, lookup ×2");
    expect(costs).toContain(`people        1 question, waited ${(waitedMs / 1000).toFixed(1)} s`);

    const json = await runCli(["show", "ship", "--json", "--store", store], { cwd: dir });
    expect(json.code, json.stderr).toBe(0);
    const figures = (JSON.parse(json.stdout) as { costs: RunCosts }).costs;
    expect(figures).toMatchObject({ claims: 2, toolCalls: { lookup: 2, deploy: 1 }, journal: { entries: stored.length, bytes } });
    expect(figures.human).toEqual({ requests: 1, pending: 0, waitMs: waitedMs });
  });
});
