/* eslint-disable no-control-regex -- the output must hold no control characters */
// `cairn top` through the compiled CLI (child processes) on a real SQLite file that another engine
// writes to: the figures match the store, the frames follow the store as it changes, a failure's text
// cannot drive the terminal, and SIGINT ends a live view cleanly.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_MAIN, runCli } from "../../test/support/cli.js";
import { onCleanup } from "../../test/support/engines.js";
import { NonRetryableError } from "../core/errors.js";
import { createEngine } from "../engine/create-engine.js";
import { defineWorkflow } from "../engine/define-workflow.js";
import { silentLogger } from "../engine/logger.js";
import { waitFor } from "../testing/wait-for.js";

const done = defineWorkflow({ name: "done", run: async (ctx) => ctx.step("s", () => 1) });
const broken = defineWorkflow({
  name: "broken",
  run: async (ctx, input: { n: number }) =>
    ctx.step("s", () => {
      throw new NonRetryableError(`card declined \u001b]0;pwned\u0007\u001b[2J for order ${input.n}`);
    }),
});
const review = defineWorkflow({ name: "review", run: async (ctx) => ctx.askHuman({ name: "ship", question: "Ship release 42?", options: ["yes", "no"] }) });

async function storeWithRuns() {
  const dir = mkdtempSync(join(tmpdir(), "cairn-top-"));
  const store = `sqlite:${join(dir, "cairn.db")}`;
  const engine = await createEngine({ store, workflows: [done, broken, review], logger: silentLogger });
  onCleanup(() => engine.close());
  engine.startWorker({ pollInterval: 10 });
  for (let i = 0; i < 3; i++) await (await engine.start(done, undefined)).result();
  for (const n of [17, 2048]) await (await engine.start(broken, { n })).result().catch(() => undefined);
  await engine.start(review, undefined, { runId: "needs-a-person" });
  await waitFor(async () => (await engine.listHumanRequests({ status: "pending" })).length === 1, { what: "the question" });
  return { dir, store, engine };
}

describe("cairn top", () => {
  it("prints runs by state, people's questions and failures grouped, matching the store, with nothing a terminal acts on", async () => {
    const { dir, store } = await storeWithRuns();
    const { code, stdout, stderr } = await runCli(["top", "--once", "--store", store], { cwd: dir });
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(/cairn top · .* · 1 worker · 6 runs/);
    expect(stdout).toMatch(/\bsuspended 1\b/);
    expect(stdout).toMatch(/\bcompleted 3\b/);
    expect(stdout).toMatch(/\bfailed 2\b/);
    expect(stdout).toContain("waiting for people (1)");
    expect(stdout).toContain("needs-a-person:ship#0");
    expect(stdout).toContain("Ship release 42?");
    // Both failures differ only by a number: one pattern, counted twice, escapes visible.
    expect(stdout).toMatch(/2× .*card declined \\x1b\]<n>;pwned\\x07\\x1b\[.* for order <n>/);
    expect(stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);

    const json = await runCli(["top", "--json", "--store", store], { cwd: dir });
    const frame = JSON.parse(json.stdout) as { summary: { counts: { total: number; byStatus: Record<string, number> } }; waiting: unknown[]; rates: null };
    expect(frame.summary.counts).toEqual({ total: 6, byStatus: { completed: 3, failed: 2, suspended: 1 } });
    expect(frame.waiting).toHaveLength(1);
    expect(frame.rates).toBeNull();
  });

  it("refreshes as the store changes, shows throughput, and stops cleanly on SIGINT", async () => {
    const { dir, store, engine } = await storeWithRuns();
    const child = spawn(process.execPath, [CLI_MAIN, "top", "--interval", "300ms", "--store", store], { cwd: dir, env: { ...process.env, CAIRN_STORE: "" } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    onCleanup(() => void child.kill("SIGKILL"));

    await waitFor(() => stdout.includes("· 6 runs"), { what: "the first frame", timeoutMs: 20_000 });
    expect(stdout).toContain("throughput: measured from the next refresh");
    for (let i = 0; i < 4; i++) await (await engine.start(done, undefined)).result();
    await waitFor(() => stdout.includes("· 10 runs"), { what: "a frame with the new runs", timeoutMs: 20_000 });
    // The frame that first saw them measured them: runs started and finished per second above zero.
    const frame = stdout.slice(stdout.lastIndexOf("cairn top ·", stdout.indexOf("· 10 runs")));
    expect(frame).toMatch(/throughput: (?!0\.0 )\d+\.\d runs started\/s, (?!0\.0 )\d+\.\d finished\/s/);
    expect(frame).toMatch(/\bcompleted 7\b/);

    child.kill("SIGINT");
    expect(await exited).toBe(0);
    expect(stderr).toBe("");
  });

  it("refuses a bad interval with a clear message and exit code 2", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-top-"));
    const { code, stderr } = await runCli(["top", "--interval", "soon", "--store", `sqlite:${join(dir, "none.db")}`], { cwd: dir });
    expect(code).toBe(2);
    expect(stderr).toMatch(/--interval must be a duration such as 500ms, 2s or 1h \(got "soon"\)/);
  });
});
