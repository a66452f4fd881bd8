/** `cairn request`, `cairn value`, `cairn runs --tag` and the tags and links `cairn show` prints, against a real SQLite file. */
import { describe, expect, it } from "vitest";
import { onCleanup, storeUrl } from "../../test/support/engines.js";
import { runCli } from "../../test/support/cli.js";
import { requireBuild } from "../../test/support/processes.js";
import { createEngine } from "../engine/create-engine.js";
import { defineWorkflow } from "../engine/define-workflow.js";
import { silentLogger } from "../engine/logger.js";
import { waitFor } from "../testing/wait-for.js";
import { tmpdir } from "node:os";

const steer = defineWorkflow({
  name: "steer",
  async run(ctx, input: { topic: string; again?: boolean }) {
    let topic = input.topic;
    ctx.handle("steer", (payload) => {
      topic = (payload as { topic: string }).topic;
      return { topic };
    });
    await ctx.publish("progress", { topic });
    await ctx.waitForEvent("finish");
    if (input.again) return ctx.continueAsNew({ topic });
    return topic;
  },
});

describe("cairn live-run commands", () => {
  it("request a reply, read a published value, list runs by tag, show tags and links", async () => {
    requireBuild();
    const store = storeUrl("sqlite");
    const engine = await createEngine({ store, workflows: [steer], logger: silentLogger });
    onCleanup(() => engine.close());
    const worker = engine.startWorker({ pollInterval: 10 });
    onCleanup(() => worker.stop());
    await engine.start(steer, { topic: "lithium", again: true }, { runId: "cli-1", tags: { customer: "acme" } });
    await engine.start(steer, { topic: "x" }, { runId: "cli-2", tags: { customer: "globex" } });
    await waitFor(async () => (await engine.getPublished("cli-1", "progress")) !== undefined, { what: "the publish" });
    const cwd = tmpdir();

    const reply = await runCli(["request", "cli-1", "steer", "--payload", '{"topic":"tides"}', "--request-id", "r1", "--json", "--store", store], { cwd });
    expect(reply.code, reply.stderr).toBe(0);
    expect(JSON.parse(reply.stdout)).toMatchObject({ requestId: "r1", reply: { topic: "tides" } });

    const value = await runCli(["value", "cli-1", "progress", "--store", store], { cwd });
    expect(value.stdout).toContain('progress = {"topic":"lithium"}');
    const missing = await runCli(["value", "cli-1", "nothing", "--store", store], { cwd });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("VALUE_NOT_FOUND");

    const tagged = await runCli(["runs", "--tag", "customer=acme", "--json", "--store", store], { cwd });
    expect((JSON.parse(tagged.stdout) as { runId: string }[]).map((r) => r.runId)).toEqual(["cli-1"]);
    const badTag = await runCli(["runs", "--tag", "customer", "--store", store], { cwd });
    expect(badTag.code).not.toBe(0);
    expect(badTag.stderr).toContain("key=value");

    await engine.sendEvent("cli-1", "finish", null);
    await waitFor(async () => (await engine.getRun("cli-1")).status === "completed", { what: "cli-1 to continue" });
    const shown = await runCli(["show", "cli-1", "--store", store], { cwd });
    expect(shown.stdout).toContain("tags      customer=acme");
    expect(shown.stdout).toContain("continued as cli-1~2");
    const next = await runCli(["show", "cli-1~2", "--store", store], { cwd });
    expect(next.stdout).toContain("continues cli-1");
  }, 60_000);
});
