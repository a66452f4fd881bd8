import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { JOURNAL_FILE_FORMAT } from "../../src/core/deploys.js";
import { createEngine } from "../../src/engine/create-engine.js";
import { defineWorkflow } from "../../src/engine/define-workflow.js";
import type { Engine } from "../../src/engine/engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import type { Workflow } from "../../src/engine/workflow.js";
import { waitFor } from "../../src/testing/wait-for.js";
import { deferred, onCleanup, tempDir } from "./engines.js";
import { requireBuild, spawnWorker } from "./processes.js";

/** A fresh store URL per test: a SQLite file, or a PostgreSQL schema dropped after the test. */
export type StoreUrlMaker = () => Promise<string>;

/** SQLite: a file in a temp directory. */
export const sqliteUrl: StoreUrlMaker = async () => `sqlite:${join(tempDir(), "cairn.db")}`;

/** PostgreSQL (CAIRN_TEST_PG_URL): a fresh schema, dropped after the test. */
export const postgresUrl: StoreUrlMaker = async () => {
  const base = process.env.CAIRN_TEST_PG_URL || "postgres://postgres@127.0.0.1:5432/test";
  const schema = `cairn_deploys_${randomBytes(5).toString("hex")}`;
  onCleanup(async () => {
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  });
  const url = new URL(base);
  url.searchParams.set("schema", schema);
  return url.toString();
};

const ROOT = resolve(".");
const CLI = join(ROOT, "dist/src/cli/main.js");
const DEPLOY_WORKFLOWS = join(ROOT, "test/fixtures/deploys-workflows.mjs");

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  requireBuild();
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("exit", (code) => done({ code, stdout, stderr }));
  });
}

function ledgerLines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

/** The same workflow name in two versions, each step counted in a ledger file. */
function versions(ledger: string) {
  const make = (version: string) =>
    defineWorkflow({
      name: "deploy-wf",
      version,
      async run(ctx, input: { n: number }) {
        const a = await ctx.step("a", () => {
          appendFileSync(ledger, `a ${ctx.runId}\n`);
          return input.n + 1;
        });
        return ctx.step("b", () => {
          appendFileSync(ledger, `b ${ctx.runId}\n`);
          return `${version}:${a * 2}`;
        });
      },
    });
  return { v1: make("1"), v2: make("2") };
}

/** Engine-level safe-deploy tests, run on a real store. */
export function deploysSpec(kind: string, makeUrl: StoreUrlMaker): void {
  async function engineOn(url: string, workflows: Workflow<any, any>[]): Promise<Engine> {
    const engine = await createEngine({ store: url, workflows, logger: silentLogger });
    onCleanup(() => engine.close());
    return engine;
  }

  describe(`safe deploys on ${kind}`, () => {
    it("lists runs per workflow version and status, with live counts and drained flags", async () => {
      const url = await makeUrl();
      const ledger = join(tempDir(), "ledger.txt");
      const { v1, v2 } = versions(ledger);
      const old = await engineOn(url, [v1]);
      const current = await engineOn(url, [v2]);
      await old.start(v1, { n: 1 }, { runId: "v1-a" });
      await old.start(v1, { n: 2 }, { runId: "v1-b" });
      await current.start(v2, { n: 3 }, { runId: "v2-a" });
      expect(await current.listVersions()).toEqual([
        { workflow: "deploy-wf", version: "1", counts: { pending: 2 }, live: 2, total: 2, drained: false, registered: false },
        { workflow: "deploy-wf", version: "2", counts: { pending: 1 }, live: 1, total: 1, drained: false, registered: true },
      ]);
      const worker = old.startWorker({ pollInterval: 10 });
      await old.result("v1-a", { timeoutMs: 20_000 });
      await old.result("v1-b", { timeoutMs: 20_000 });
      await worker.stop();
      expect(await current.retireVersion("deploy-wf", "1")).toBe(true);
      const listed = await current.listVersions();
      expect(listed[0]).toMatchObject({ version: "1", counts: { completed: 2 }, live: 0, drained: true });
      expect(listed[1]).toMatchObject({ version: "2", counts: { pending: 1 }, live: 1, drained: false });
    });

    it("a retired version is not claimed, by this engine's workers or another's; others are; reinstating resumes it", async () => {
      const url = await makeUrl();
      const ledger = join(tempDir(), "ledger.txt");
      const { v1, v2 } = versions(ledger);
      const engine = await engineOn(url, [v1, v2]);
      expect(await engine.retireVersion("deploy-wf", "1")).toBe(true);
      expect(await engine.retireVersion("deploy-wf", "1")).toBe(false);
      // The retired version's run is older: claims go oldest first, so a broken retirement takes it before the other.
      await engine.start(v1, { n: 1 }, { runId: "old-run" });
      await engine.start(v2, { n: 1 }, { runId: "new-run" });
      engine.startWorker({ pollInterval: 10 });
      // Started while this engine's new worker has a free slot: not handed to it either.
      await engine.start(v1, { n: 2 }, { runId: "old-run-2" });
      // Another process that has the old code and heard nothing but the store.
      const other = await engineOn(url, [v1, v2]);
      other.startWorker({ pollInterval: 10 });
      await engine.start(v2, { n: 5 }, { runId: "newer-run" });
      await engine.result("new-run", { timeoutMs: 20_000 });
      await other.result("newer-run", { timeoutMs: 20_000 });
      const old = await engine.getRun("old-run");
      expect(old.status).toBe("pending");
      expect((await engine.journal("old-run")).map((e) => e.kind)).toEqual(["run.created"]);
      expect(ledgerLines(ledger).filter((line) => line.endsWith(" old-run"))).toEqual([]);
      expect((await engine.journal("old-run-2")).map((e) => e.kind)).toEqual(["run.created"]);

      expect(await engine.reinstateVersion("deploy-wf", "1")).toBe(true);
      expect(await engine.reinstateVersion("deploy-wf", "1")).toBe(false);
      expect(await engine.result("old-run", { timeoutMs: 20_000 })).toBe("1:4");
      expect(await engine.result("old-run-2", { timeoutMs: 20_000 })).toBe("1:6");
    });

    it("a running worker hears of another process's drain on its heartbeat: new runs stay pending, a run mid-step finishes that execution and is not claimed again", async () => {
      const url = await makeUrl();
      const entered = deferred();
      const release = deferred<string>();
      const steps: string[] = [];
      const make = (version: string) =>
        defineWorkflow({
          name: "drain-wf",
          version,
          async run(ctx, input: { hold: boolean }) {
            const held = await ctx.step("hold", () => {
              steps.push(`hold ${ctx.runId}`);
              if (!input.hold) return "quick";
              entered.resolve();
              return release.promise;
            });
            await ctx.sleep("nap", 50);
            return ctx.step("after", () => {
              steps.push(`after ${ctx.runId}`);
              return `${version}:${held}`;
            });
          },
        });
      const [v1, v2] = [make("1"), make("2")];
      const engine = await engineOn(url, [v1, v2]);
      // The worker starts first (it reads the drained list now: empty), with a short lease: a heartbeat every 100 ms.
      const worker = engine.startWorker({ pollInterval: 10, leaseMs: 300 });
      await engine.start(v1, { hold: true }, { runId: "mid" });
      await entered.promise;

      // Another process drains version 1 through the store alone.
      const other = await engineOn(url, [v1, v2]);
      expect(await other.retireVersion("drain-wf", "1")).toBe(true);
      const drainedAt = Date.now();
      // Three heartbeats after the drain: each rereads the drained list (one read at a time).
      const beats = new Set<number>();
      await waitFor(
        async () => {
          for (const w of await engine.listWorkers()) if (w.workerId === worker.workerId && w.heartbeatAt > drainedAt) beats.add(w.heartbeatAt);
          return beats.size >= 3;
        },
        { timeoutMs: 10_000, what: "three heartbeats after the drain" },
      );

      // A new run of the drained version is older than one of version 2: claims go oldest first.
      await engine.start(v1, { hold: false }, { runId: "fresh" });
      await engine.start(v2, { hold: false }, { runId: "current" });
      expect(await engine.result("current", { timeoutMs: 20_000 })).toBe("2:quick");

      // The run mid-step when the drain landed finishes its execution: its step completes and it suspends.
      release.resolve("held");
      const suspended = await waitFor(
        async () => {
          const run = await engine.getRun("mid");
          return run.status === "suspended" && run;
        },
        { timeoutMs: 20_000, what: "the mid-step run to suspend" },
      );
      // Once its nap is over it is due, and the worker (still claiming) must leave it alone.
      await waitFor(async () => Date.now() > Number(suspended.wakeAt ?? 0) + 20, { timeoutMs: 5_000, what: "the nap to be due" });
      await engine.start(v2, { hold: false }, { runId: "later" });
      expect(await engine.result("later", { timeoutMs: 20_000 })).toBe("2:quick");
      expect((await engine.getRun("mid")).status).toBe("suspended");
      const midKinds = (await engine.journal("mid")).map((e) => e.kind);
      expect(midKinds.filter((kind) => kind === "run.claimed")).toHaveLength(1);
      expect(midKinds).toContain("step.completed");
      expect(midKinds.at(-1)).toBe("run.suspended");
      expect((await engine.journal("fresh")).map((e) => e.kind)).toEqual(["run.created"]);
      expect(steps.filter((line) => !line.endsWith(" current") && !line.endsWith(" later"))).toEqual(["hold mid"]);

      // Undrained (again by the other process): the worker resumes both on a heartbeat.
      expect(await other.reinstateVersion("drain-wf", "1")).toBe(true);
      expect(await engine.result("mid", { timeoutMs: 20_000 })).toBe("1:held");
      expect(await engine.result("fresh", { timeoutMs: 20_000 })).toBe("1:quick");
    });

    it("a worker started with retire skips that version even when the store has it in service", async () => {
      const url = await makeUrl();
      const ledger = join(tempDir(), "ledger.txt");
      const { v1, v2 } = versions(ledger);
      const engine = await engineOn(url, [v1, v2]);
      await engine.start(v1, { n: 1 }, { runId: "skip-me" });
      await engine.start(v2, { n: 1 }, { runId: "take-me" });
      const worker = engine.startWorker({ pollInterval: 10, retire: ["deploy-wf@1"] });
      await engine.result("take-me", { timeoutMs: 20_000 });
      expect((await engine.getRun("skip-me")).status).toBe("pending");
      await worker.stop();
      expect(() => engine.startWorker({ retire: ["no-version"] })).toThrow(/workflow>@<version/);
      engine.startWorker({ pollInterval: 10 });
      expect(await engine.result("skip-me", { timeoutMs: 20_000 })).toBe("1:4");
    });

    it("the deprecated names still work: drainVersion, undrainVersion, startWorker({ drain })", async () => {
      const url = await makeUrl();
      const ledger = join(tempDir(), "ledger.txt");
      const { v1, v2 } = versions(ledger);
      const engine = await engineOn(url, [v1, v2]);
      expect(await engine.drainVersion("deploy-wf", "2")).toBe(true);
      expect(await engine.retireVersion("deploy-wf", "2")).toBe(false);
      expect((await engine.listVersions()).find((v) => v.version === "2")).toMatchObject({ drained: true });
      expect(await engine.undrainVersion("deploy-wf", "2")).toBe(true);
      expect(await engine.reinstateVersion("deploy-wf", "2")).toBe(false);
      await engine.start(v1, { n: 1 }, { runId: "old-name" });
      await engine.start(v2, { n: 1 }, { runId: "new-name" });
      const worker = engine.startWorker({ pollInterval: 10, drain: ["deploy-wf@1"] });
      await engine.result("new-name", { timeoutMs: 20_000 });
      expect((await engine.getRun("old-name")).status).toBe("pending");
      await worker.stop();
      expect(() => engine.startWorker({ drain: ["no-version"] })).toThrow(/workflow>@<version/);
    });

    it("replay executes nothing: no step runs, nothing is written, and it stops at the first op with no outcome", async () => {
      const url = await makeUrl();
      const ledger = join(tempDir(), "ledger.txt");
      const { v1 } = versions(ledger);
      const engine = await engineOn(url, [v1]);
      const worker = engine.startWorker({ pollInterval: 10 });
      await engine.start(v1, { n: 1 }, { runId: "done-run" });
      await engine.result("done-run", { timeoutMs: 20_000 });
      await worker.stop();
      const before = ledgerLines(ledger);
      expect(before).toEqual(["a done-run", "b done-run"]);
      const journal = await engine.store.readJournal("done-run");

      const report = await engine.replay("done-run");
      expect(report).toMatchObject({ ok: true, stoppedAt: "completed", replayedSeq: journal.at(-1)!.seq, deliveredOutcomes: 2 });
      // A `cairn export` file replays the same way.
      const exported = JSON.parse(JSON.stringify(await engine.exportRun("done-run"))) as unknown;
      expect(await engine.replay(exported as never)).toEqual(report);

      // The journal cut after step a's outcome: b has no journaled outcome, so replay stops there.
      const run = (await engine.store.getRun("done-run"))!;
      const cut = journal.findIndex((e) => e.kind === "step.completed") + 1;
      const partial = await engine.replay({ format: JOURNAL_FILE_FORMAT, run: { ...run }, journal: journal.slice(0, cut) });
      expect(partial).toMatchObject({ ok: true, stoppedAt: "frontier", frontier: "b#0", deliveredOutcomes: 1, replayedSeq: cut });
      // Even its intent alone (an unconfirmed step a worker would reconcile and run) is not run.
      const intentOnly = journal.findIndex((e) => e.kind === "step.started" && e.opKey === "b#0") + 1;
      const pending = await engine.replay({ format: JOURNAL_FILE_FORMAT, run: { ...run }, journal: journal.slice(0, intentOnly) });
      expect(pending).toMatchObject({ ok: true, stoppedAt: "frontier", frontier: "b#0" });

      expect(ledgerLines(ledger)).toEqual(before);
      expect(await engine.store.readJournal("done-run")).toEqual(journal);
      expect((await engine.getRun("done-run")).status).toBe("completed");
      await expect(engine.replay("no-such-run")).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
      await expect(engine.replay({ format: "nope" } as never)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    });

    it("dead-letters a run whose recoveries keep dying (SIGKILL), and cairn retry revives it", async () => {
      requireBuild();
      const url = await makeUrl();
      const ledger = join(tempDir(), "ledger.txt");
      const poison = defineWorkflow({ name: "poison", run: async (_ctx, _input: { n: number }) => 0 }); // starts it; workers run the real one
      const engine = await engineOn(url, [poison]);
      await engine.start(poison, { n: 4 }, { runId: "poisoned" });
      const env = {
        CAIRN_TEST_STORE: url,
        CAIRN_TEST_WORKFLOWS: DEPLOY_WORKFLOWS,
        CAIRN_TEST_LEASE_MS: "300",
        CAIRN_TEST_MAX_RECOVERY: "3",
        CAIRN_TEST_LEDGER: ledger,
        CAIRN_TEST_POISON: "1",
      };
      // Attempt 1 completes "before" (progress), then "boom" kills its worker; attempts 2 to 4 (recoveries)
      // die in "boom" without progress: 3 failures in a row.
      for (let attempt = 1; attempt <= 4; attempt++) {
        const worker = spawnWorker(env);
        const exit = await worker.exited;
        expect(exit.signal, worker.output()).toBe("SIGKILL");
        expect(ledgerLines(ledger)).toHaveLength(attempt);
        expect((await engine.getRun("poisoned")).status).toBe("running");
      }
      // The next worker finds 3 failed attempts in a row: dead, not claimed.
      const last = spawnWorker(env);
      const dead = await waitFor(
        async () => {
          const run = await engine.getRun("poisoned");
          return run.status === "dead" && run;
        },
        { timeoutMs: 30_000, what: "the run to be dead-lettered" },
      );
      expect(dead.error).toMatchObject({ code: "RECOVERY_FAILED", data: { failures: 3 } });
      expect(last.child.exitCode).toBeNull(); // the deciding worker did not run it
      last.child.kill("SIGKILL");
      await last.exited;
      expect(ledgerLines(ledger)).toHaveLength(4);
      const journal = await engine.journal("poisoned");
      expect(journal.at(-1)).toMatchObject({ kind: "run.dead", data: { failures: 3 } });
      await expect(engine.result("poisoned", { timeoutMs: 1000 })).rejects.toMatchObject({ code: "RUN_FAILED" });

      // The cause is fixed (the poison is gone): an operator retries it.
      const retried = await cli(["retry", "poisoned", "--store", url]);
      expect(retried.code, retried.stderr).toBe(0);
      // A long lease: the short one above makes recoveries quick, but on a loaded machine it could
      // also expire under a healthy worker, which would then run the step again (at least once).
      const healthy = spawnWorker({ ...env, CAIRN_TEST_POISON: "0", CAIRN_TEST_LEASE_MS: "30000" });
      expect(await engine.result("poisoned", { timeoutMs: 30_000 })).toBe((4 + 1) * 2 + 1);
      healthy.child.kill("SIGKILL");
      expect(ledgerLines(ledger)).toHaveLength(5);
    });

    it("cairn worker --max-recovery-attempts 2: the poison run is dead after 2 failed recoveries (the default, 10, would go on)", async () => {
      requireBuild();
      const url = await makeUrl();
      const ledger = join(tempDir(), "ledger.txt");
      const poison = defineWorkflow({ name: "poison", run: async (_ctx, _input: { n: number }) => 0 });
      const engine = await engineOn(url, [poison]);
      await engine.start(poison, { n: 1 }, { runId: "poisoned" });
      const args = [CLI, "worker", "--store", url, "--workflows", DEPLOY_WORKFLOWS, "--lease-ms", "300", "--max-recovery-attempts", "2"];
      const env = { ...process.env, CAIRN_TEST_LEDGER: ledger, CAIRN_TEST_POISON: "1" };
      // Attempt 1 makes progress ("before") and dies in "boom"; recoveries 2 and 3 die there without progress.
      for (let attempt = 1; attempt <= 3; attempt++) {
        const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: "ignore" });
        const signal = await new Promise<NodeJS.Signals | null>((done) => child.on("exit", (_code, sig) => done(sig)));
        expect(signal).toBe("SIGKILL");
      }
      const last = spawn(process.execPath, args, { cwd: ROOT, env, stdio: "ignore" });
      onCleanup(() => void last.kill("SIGKILL"));
      await waitFor(async () => (await engine.getRun("poisoned")).status === "dead", { timeoutMs: 30_000, what: "the run to be dead-lettered" });
      expect((await engine.journal("poisoned")).at(-1)).toMatchObject({ kind: "run.dead", data: { failures: 2 } });
      expect(ledgerLines(ledger)).toHaveLength(3);
      expect(last.exitCode).toBeNull();
    });

    it("cairn versions, retire and reinstate against the store; drain and undrain still work and warn", async () => {
      requireBuild();
      const url = await makeUrl();
      const ledger = join(tempDir(), "ledger.txt");
      const { v1 } = versions(ledger);
      const engine = await engineOn(url, [v1]);
      await engine.start(v1, { n: 1 }, { runId: "cli-run" });
      const retired = await cli(["retire", "deploy-wf@1", "--store", url]);
      expect(retired.code, retired.stderr).toBe(0);
      expect(retired.stdout).toMatch(/deploy-wf@1 retired/);
      expect(retired.stderr).not.toMatch(/deprecated/);
      const table = await cli(["versions", "--store", url]);
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout.split("\n")[0]).toMatch(/^WORKFLOW\s+VERSION\s+LIVE\s+PENDING\s+STATE$/);
      expect(table.stdout.split("\n")[1]).toMatch(/^deploy-wf\s+1\s+1\s+1\s+retired$/);
      const json = JSON.parse((await cli(["versions", "--json", "--store", url])).stdout) as unknown[];
      expect(json).toEqual([expect.objectContaining({ workflow: "deploy-wf", version: "1", live: 1, drained: true })]);
      expect((await cli(["retire", "deploy-wf", "--store", url])).code).toBe(2);
      expect((await cli(["reinstate", "deploy-wf@1", "--store", url])).code).toBe(0);
      expect(await engine.store.listDrainedVersions()).toEqual([]);
      // The older names: same effect, plus a one-line notice on stderr; hidden from the help.
      const drained = await cli(["drain", "deploy-wf@1", "--store", url]);
      expect(drained.code, drained.stderr).toBe(0);
      expect(drained.stdout).toMatch(/deploy-wf@1 retired/);
      expect(drained.stderr.trim()).toBe("warning: cairn drain is deprecated and will be removed; use cairn retire (it does the same).");
      expect(await engine.store.listDrainedVersions()).toEqual([expect.objectContaining({ workflow: "deploy-wf", version: "1" })]);
      const undrained = await cli(["undrain", "deploy-wf@1", "--store", url]);
      expect(undrained.code, undrained.stderr).toBe(0);
      expect(undrained.stderr).toContain("cairn undrain is deprecated");
      expect(await engine.store.listDrainedVersions()).toEqual([]);
      const help = await cli(["--help"]);
      expect(help.stdout).toMatch(/^\s+retire /m);
      expect(help.stdout).not.toMatch(/^\s+drain /m);
    });

    it("cairn replay: exit 0 when a committed journal replays, 1 with the divergence when an op was renamed", async () => {
      requireBuild();
      const url = await makeUrl();
      const fixture = join(ROOT, "test/fixtures/journals/approval-escalated--po-2@1.json");
      const clean = await cli(["replay", fixture, "--workflows", join(ROOT, "dist/examples/index.js"), "--store", url]);
      expect(clean.code, clean.stderr).toBe(0);
      expect(clean.stdout).toMatch(/^po-2 \(approval@1\): replays cleanly up to seq \d+ \(4 outcomes\); the code runs to its end\.$/m);
      const json = JSON.parse((await cli(["replay", fixture, "--json", "--workflows", join(ROOT, "dist/examples/index.js"), "--store", url])).stdout);
      expect(json).toMatchObject({ runId: "po-2", ok: true, stoppedAt: "completed" });

      const renamed = await cli(["replay", fixture, "--workflows", DEPLOY_WORKFLOWS, "--store", url], { CAIRN_TEST_RENAMED: "1" });
      expect(renamed.code).toBe(1);
      expect(renamed.stdout).toContain('diverges at op "notify-approver#0"');
      expect(renamed.stdout).toContain('issues "ping-approver#0" instead');
      expect(renamed.stderr).toContain("NON_DETERMINISM");

      // Replaying a file touched no store; a run id needs one (a missing SQLite file is refused, not created).
      expect((await cli(["migrate", "--store", url])).code).toBe(0);
      const missing = await cli(["replay", "no-such-run", "--workflows", DEPLOY_WORKFLOWS, "--store", url]);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain("RUN_NOT_FOUND");
    });
  });
}
