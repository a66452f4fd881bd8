import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../engine/create-engine.js";
import { defineWorkflow } from "../engine/define-workflow.js";
import { silentLogger } from "../engine/logger.js";
import { waitFor } from "../testing/wait-for.js";
import { CLI_MAIN, runCli, type CliResult } from "../../test/support/cli.js";

// Drives the compiled CLI (npm run build) against a SQLite store prepared through the library.

let dir: string;
let store: string;

function cli(...args: string[]): Promise<CliResult> {
  return runCli([...args, "--store", store], { cwd: dir, env: { CAIRN_STORE: store } });
}

const looper = defineWorkflow({
  name: "looper",
  version: "1",
  async run(ctx) {
    return ctx.loop(
      "l",
      0,
      async (n, it) => {
        if (n === 30) await it.ctx.waitForEvent("go");
        const next = await it.ctx.step("inc", () => n + 1);
        return next === 40 ? it.done(next) : next;
      },
      { snapshotEvery: 5 },
    );
  },
});

beforeAll(async () => {
  if (!existsSync(CLI_MAIN)) throw new Error(`${CLI_MAIN} is missing: compile the project first (npm run build), then run the tests.`);
  dir = mkdtempSync(join(tmpdir(), "cairn-compact-cli-"));
  store = `sqlite:${join(dir, "x.db")}`;
  const engine = await createEngine({ store, workflows: [looper], logger: silentLogger });
  try {
    const worker = engine.startWorker({ pollInterval: 10 });
    await engine.start(looper, undefined, { runId: "loop" });
    await waitFor(async () => (await engine.getRun("loop")).status === "suspended", { what: "loop waits for go" });
    await worker.stop();
  } finally {
    await engine.close();
  }
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("cairn compact", () => {
  it("counts on a dry run, compacts a live run, and cairn show says what went", async () => {
    const dry = await cli("compact", "--checkpoints-before", "0s", "--dry-run", "--json");
    expect(dry.code, dry.stderr).toBe(0);
    const counted = JSON.parse(dry.stdout) as { runIds: string[]; entries: number; dryRun: boolean };
    expect(counted).toMatchObject({ runIds: ["loop"], dryRun: true });
    expect(counted.entries).toBeGreaterThan(50);

    const done = await cli("compact", "--checkpoints-before", "0s", "--run", "loop");
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toMatch(new RegExp(`Compacted ${counted.entries} journal entries \\(\\d+ bytes\\) of 1 run\\(s\\)\\.`));
    const show = await cli("show", "loop");
    expect(show.stdout).toMatch(new RegExp(`${counted.entries} journal entries compacted \\(superseded by loop checkpoints, before seq \\d+`));
    const json = JSON.parse((await cli("show", "loop", "--json")).stdout) as { compaction?: { entries: number } };
    expect(json.compaction?.entries).toBe(counted.entries);

    const bad = await cli("compact", "--checkpoints-before", "soon");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/checkpoints-before/);
  });
});
