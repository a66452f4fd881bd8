import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CLI_MAIN, runCli } from "../../test/support/cli.js";
import { onCleanup, tempDir } from "../../test/support/engines.js";
import { defineAgent } from "../agent/agent.js";
import { ScriptedModel } from "../agent/model/scripted.js";
import { defineTool } from "../agent/tool.js";
import { createEngine } from "../engine/create-engine.js";
import { silentLogger } from "../engine/logger.js";
import { waitFor } from "../testing/wait-for.js";

const ESC = "\u001b";

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
  const model = new ScriptedModel(
    [
      {
        content: [
          { type: "text", text: `Checking ${ESC}[31mfirst${ESC}[0m.` },
          { type: "tool_use", id: "call_0", name: "lookup", input: { q: `${ESC}]0;pwned\u0007` } },
          { type: "tool_use", id: "call_1", name: "deploy", input: { env: "prod" } },
        ],
      },
      { content: "All done." },
    ],
    { modelId: "show-model" },
  );
  return defineAgent({ name: "shower", model, tools: [lookup, deploy], prices: { "show-model": { input: 1, output: 2 } }, budget: { maxCostUsd: 5 } });
}

describe("cairn show of an agent run", () => {
  it("prints the transcript, approvals and spend of a running run, follows it to the end, and escapes control characters", async () => {
    const dir = tempDir();
    const store = `sqlite:${join(dir, "cairn.db")}`;
    const agent = makeAgent();
    const engine = await createEngine({ store, workflows: [agent], logger: silentLogger });
    onCleanup(() => engine.close());
    engine.startWorker({ pollInterval: 10 });
    await engine.start(agent, { prompt: `Ship it ${ESC}[2J now` }, { runId: "ship" });
    await waitFor(async () => (await engine.listHumanRequests({ status: "pending", runId: "ship" })).length === 1, { what: "the approval" });

    const shown = await runCli(["show", "ship", "--store", store], { cwd: dir });
    expect(shown.code, shown.stderr).toBe(0);
    const out = shown.stdout;
    expect(out).not.toContain(ESC);
    expect(out).not.toContain("\u0007");
    expect(out).toContain("Transcript");
    expect(out).toMatch(/user\s+Ship it \\x1b\[2J now/);
    expect(out).toMatch(/assistant\s+Checking \\x1b\[31mfirst/);
    expect(out).toMatch(/tool call\s+lookup \{"q":"\\u001b\]0;pwned\\u0007"\}\s+\(call call_0\)/);
    expect(out).toMatch(/result\s+lookup → "found \\u001b\]0;pwned\\u0007"\s+\(call call_0, key ship:tool:0:call_0\)/);
    expect(out).toMatch(/approval\s+deploy \(call call_1\): waiting for a person/);
    expect(out).toMatch(/model calls\s+1\s+tool calls 1/);
    expect(out).toMatch(/cost\s+\$0\.\d{6}/);
    expect(out).toContain("limit        $5.000000");

    // The list of human requests says what the approval is about.
    const requests = await runCli(["human-requests", "--store", store], { cwd: dir });
    expect(requests.stdout).toContain("What they are about:");
    expect(requests.stdout).toMatch(/tool=deploy\s+toolCallId=call_1\s+arguments=\{"env":"prod"\}/);
    expect(requests.stderr).not.toContain("deprecated");
    // `cairn inbox`, its older name, prints the same and a one-line deprecation notice on stderr.
    const inbox = await runCli(["inbox", "--store", store], { cwd: dir });
    expect(inbox.code, inbox.stderr).toBe(0);
    expect(inbox.stdout).toBe(requests.stdout);
    expect(inbox.stderr.trim()).toBe("warning: cairn inbox is deprecated and will be removed; use cairn human-requests (it does the same).");

    // Follow it while a person edits the call: the rest of the transcript arrives, then the end.
    const follow = spawn(process.execPath, [CLI_MAIN, "show", "ship", "--follow", "--store", store], { cwd: dir });
    let followed = "";
    follow.stdout.on("data", (chunk: Buffer) => (followed += chunk.toString()));
    onCleanup(() => void follow.kill("SIGKILL"));
    await waitFor(() => followed.includes("waiting for a person"), { what: "follow to print the transcript so far" });
    const [request] = await engine.listHumanRequests({ status: "pending", runId: "ship" });
    await engine.respondToHuman(request!.requestId, {
      action: "answer",
      option: "edit",
      value: { env: "staging" },
      by: "ada",
      message: "not prod on a Friday",
    });
    const code = await new Promise<number | null>((resolve) => follow.on("close", resolve));
    expect(code).toBe(0);
    expect(followed).not.toContain(ESC);
    expect(followed).toMatch(/result\s+deploy → "deployed to staging"\s+\(call call_1, key ship:tool:0:call_1\)/);
    expect(followed).toMatch(/assistant\s+All done\./);
    expect(followed).toMatch(/spend: model calls 2 tool calls 2/);
    expect(followed).toContain("run ship completed");

    const final = await runCli(["show", "ship", "--store", store], { cwd: dir });
    expect(final.stdout).toMatch(/approval\s+deploy \(call call_1\): edit by ada with \{"env":"staging"\} — "not prod on a Friday"/);
  });
});
