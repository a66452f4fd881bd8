import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../engine/create-engine.js";
import { defineWorkflow } from "../engine/define-workflow.js";
import { silentLogger } from "../engine/logger.js";
import { waitFor } from "../testing/wait-for.js";

// Drives the compiled CLI (npm run build) against a SQLite store prepared through the library.
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = join(ROOT, "dist/src/cli/main.js");

let dir: string;
let store: string;

function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args, "--store", store], { cwd: dir, env: { ...process.env, CAIRN_STORE: store } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const echo = defineWorkflow({
  name: "echo",
  version: "1",
  async run(ctx, input: { n: number }) {
    return ctx.step("double", () => input.n * 2, { searchText: (r) => `doubled ${r}` });
  },
});
const waiter = defineWorkflow({
  name: "waiter",
  version: "1",
  async run(ctx) {
    return ctx.waitForEvent("go");
  },
});

/** Runs `ids` of echo to completion and leaves "live" waiting, through the library. */
async function prepare(ids: string[]): Promise<void> {
  const engine = await createEngine({ store, workflows: [echo, waiter], logger: silentLogger });
  try {
    const worker = engine.startWorker({ pollInterval: 10 });
    for (const [i, runId] of ids.entries()) await engine.start(echo, { n: i }, { runId });
    for (const runId of ids) await engine.result(runId, { timeoutMs: 10_000 });
    await engine.start(waiter, {}, { runId: "live" });
    await waitFor(async () => (await engine.getRun("live")).status === "suspended");
    await worker.stop();
  } finally {
    await engine.close();
  }
}

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: compile the project first (npm run build), then run the tests.`);
  dir = mkdtempSync(join(tmpdir(), "cairn-retention-cli-"));
  store = `sqlite:${join(dir, "x.db")}`;
  await prepare(["a", "b", "c"]);
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("cairn prune / export / import", () => {
  it("refuses a bad cutoff or status with exit 2 and says what to pass", async () => {
    const cutoff = await cli("prune", "--completed-before", "yesterday");
    expect(cutoff.code).toBe(2);
    expect(cutoff.stderr).toMatch(/duration before now such as 30d.*2026-01-31/);
    const status = await cli("prune", "--completed-before", "30d", "--status", "running");
    expect(status.code).toBe(2);
    expect(status.stderr).toMatch(/only terminal statuses/);
  });

  it("dry run lists and changes nothing; a recent cutoff deletes nothing", async () => {
    const dry = await cli("prune", "--completed-before", "2999-01-01", "--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout.trim().split("\n")).toEqual(["a", "b", "c"]);
    expect(dry.stderr).toMatch(/3 run\(s\) would be deleted/);
    const recent = await cli("prune", "--completed-before", "30d", "--json");
    expect(JSON.parse(recent.stdout)).toMatchObject({ runIds: [], dryRun: false });
    const runs = JSON.parse((await cli("runs", "--json")).stdout) as { runId: string }[];
    expect(runs.map((r) => r.runId).sort()).toEqual(["a", "b", "c", "live"]);
  });

  it("exports, archives while pruning, and imports back (refusing a taken id unless --as)", async () => {
    const out = join(dir, "a.json");
    const exported = await cli("export", "a", "--out", out);
    expect(exported.code, exported.stderr).toBe(0);
    const file = JSON.parse(readFileSync(out, "utf8")) as { format: string; version: number; run: { runId: string; status: string } };
    expect(file).toMatchObject({ format: "cairn.run-export", version: 1, run: { runId: "a", status: "completed" } });

    const live = await cli("export", "live");
    expect(live.code).toBe(1);
    expect(live.stderr).toMatch(/RUN_NOT_FINISHED|only finished runs/);
    const forced = await cli("export", "live", "--force");
    expect(JSON.parse(forced.stdout)).toMatchObject({ run: { runId: "live", status: "suspended" } });

    const archive = join(dir, "archive");
    const pruned = await cli(
      "prune",
      "--completed-before",
      "2999-01-01",
      "--status",
      "completed",
      "--workflow",
      "echo",
      "--archive",
      archive,
      "--batch-size",
      "2",
    );
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toMatch(/Deleted 3 run\(s\), archived to/);
    expect(readdirSync(archive).sort()).toEqual(["a.json", "b.json", "c.json"]);
    expect((await cli("show", "a")).code).toBe(1);

    const imported = await cli("import", join(archive, "a.json"));
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toMatch(/Imported a \(completed\)/);
    const shown = JSON.parse((await cli("show", "a", "--json")).stdout) as { run: { status: string; output: unknown } };
    expect(shown.run).toMatchObject({ status: "completed", output: 0 });
    const again = await cli("import", out);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already exists/);
    const copy = await cli("import", out, "--as", "a-copy", "--json");
    expect(JSON.parse(copy.stdout)).toMatchObject({ runId: "a-copy", status: "completed" });

    const audit = JSON.parse((await cli("audit", "--json")).stdout) as { action: string }[];
    expect(audit.map((e) => e.action)).toEqual(expect.arrayContaining(["run.prune", "run.export", "run.import"]));
  });

  it("a bad file exits non-zero with a clear message and writes nothing", async () => {
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ format: "cairn.run-export", version: 1, run: { runId: "zz" } }));
    const result = await cli("import", bad);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Not a valid Cairn run export/);
    writeFileSync(bad, "{not json");
    expect((await cli("import", bad)).stderr).toMatch(/is not JSON/);
    expect((await cli("show", "zz")).code).toBe(1);
  });

  it("cairn worker --retention-completed prunes finished runs on its own", async () => {
    await prepare(["w1"]);
    const worker = spawn(
      process.execPath,
      [MAIN, "worker", "--store", store, "--retention-completed", "1ms", "--retention-interval", "1h", "--poll-ms", "50"],
      {
        cwd: dir,
        env: { ...process.env, CAIRN_STORE: store },
      },
    );
    try {
      await waitFor(
        async () => {
          const runs = JSON.parse((await cli("runs", "--json")).stdout) as { runId: string }[];
          return !runs.some((r) => r.runId === "w1") && runs;
        },
        { timeoutMs: 20_000, what: "the worker's retention pass" },
      );
      expect((await cli("show", "live", "--json")).code).toBe(0);
    } finally {
      await stop(worker);
    }
  });
});

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}
