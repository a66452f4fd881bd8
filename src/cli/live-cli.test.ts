/** `cairn request`, `cairn value`, `cairn runs --tag` and the tags and links `cairn show` prints, against a real SQLite file. */
import { describe, expect, it } from "vitest";
import { onCleanup, storeUrl } from "../../test/support/engines.js";
import { runCli } from "../../test/support/cli.js";
import { requireBuild } from "../../test/support/processes.js";
import { createEngine } from "../engine/create-engine.js";
import { defineWorkflow } from "../engine/define-workflow.js";
import { silentLogger } from "../engine/logger.js";
import { waitFor } from "../testing/wait-for.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

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

describe("cairn start with tags, a deadline and a delayed start", () => {
  it("passes --tag, --deadline and --delay to the run, and refuses bad ones with exit 2", async () => {
    requireBuild();
    const store = storeUrl("sqlite");
    const dir = mkdtempSync(join(tmpdir(), "cairn-start-"));
    const module = join(dir, "hello.mjs");
    const index = pathToFileURL(resolve("dist/src/index.js")).href;
    writeFileSync(
      module,
      `import { defineWorkflow } from ${JSON.stringify(index)};\nexport const hello = defineWorkflow({ name: "hello", run: async (ctx, input) => input });\n`,
    );
    const start = (...args: string[]) => runCli(["start", "hello", "--workflows", module, "--store", store, ...args], { cwd: dir });

    const before = Date.now();
    const started = await start("--run-id", "later", "--tag", "customer=acme", "--tag", "tier=gold", "--deadline", "2h", "--delay", "10m", "--json");
    expect(started.code, started.stderr).toBe(0);
    expect(JSON.parse(started.stdout)).toMatchObject({ runId: "later", created: true });

    const engine = await createEngine({ store, workflows: [], logger: silentLogger });
    onCleanup(() => engine.close());
    const run = (await engine.getRun("later"))!;
    expect(run.tags).toEqual({ customer: "acme", tier: "gold" });
    // Delayed: suspended on its start timer ten minutes out, not pending for the next worker.
    expect(run.status).toBe("suspended");
    expect(run.wakeAt!.getTime()).toBeGreaterThanOrEqual(before + 10 * 60_000 - 1000);
    expect(run.wakeAt!.getTime()).toBeLessThan(Date.now() + 10 * 60_000 + 1000);
    const created = (await engine.journal("later")).find((entry) => entry.kind === "run.created")!;
    // The deadline counts from the delayed start.
    expect((created.data as { deadlineAt: number }).deadlineAt - run.wakeAt!.getTime()).toBe(2 * 3600_000);

    const at = await start("--run-id", "at", "--start-at", "2030-01-01T09:00:00Z");
    expect(at.code, at.stderr).toBe(0);
    expect((await engine.getRun("at"))!.wakeAt!.toISOString()).toBe("2030-01-01T09:00:00.000Z");

    for (const [args, message] of [
      [["--tag", "customer"], /key=value/],
      [["--deadline", "soon"], /--deadline/],
      [["--start-at", "tomorrow"], /ISO date-time/],
      [["--delay", "1m", "--start-at", "2030-01-01T09:00:00Z"], /delay/],
    ] as const) {
      const refused = await start("--run-id", `bad-${args[0]}`, ...args);
      expect(refused.code, `${args.join(" ")}: ${refused.stderr}`).not.toBe(0);
      expect(refused.stderr).toMatch(message);
      await expect(engine.getRun(`bad-${args[0]}`)).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
    }
  });
});
