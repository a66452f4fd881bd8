import { execFile, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { createEngine } from "../engine/create-engine.js";
import { defineWorkflow } from "../engine/define-workflow.js";
import { silentLogger } from "../engine/logger.js";
import { defineSchedule } from "../engine/schedule.js";
import { waitFor } from "../testing/wait-for.js";
import { onCleanup, tempDir } from "../../test/support/engines.js";
import { requireBuild } from "../../test/support/processes.js";

const MAIN = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const run = promisify(execFile);

async function cli(store: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MAIN, ...args], { env: { ...process.env, CAIRN_STORE: store } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe("cairn schedules", () => {
  it("lists schedules with next fire time and status; pause and resume them; unknown and bad names are errors", async () => {
    requireBuild();
    const store = `sqlite:${join(tempDir(), "cairn.db")}`;
    const report = defineWorkflow({ name: "report", version: "1", run: async () => "ok" });
    const engine = await createEngine({
      store,
      workflows: [report],
      logger: silentLogger,
      schedules: [defineSchedule({ name: "nightly", workflow: report, cron: "0 3 * * *", timezone: "Europe/Berlin", overlap: "buffer" })],
    });
    onCleanup(() => engine.close());
    const expectedNext = (await engine.getSchedule("nightly")).nextTickAt!.toISOString();

    const listed = await cli(store, "schedules");
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^NAME\s+WORKFLOW\s+CRON\s+STATUS\s+NEXT\s+LAST TICK\s+LAST RUN\s+FIRED\/SKIPPED\/MISSED/);
    expect(listed.stdout).toMatch(/nightly\s+report\s+0 3 \* \* \* \(Europe\/Berlin\)\s+active/);

    const json = JSON.parse((await cli(store, "schedules", "--json")).stdout) as { name: string; status: string; nextTickAt: string; overlap: string }[];
    expect(json).toEqual([expect.objectContaining({ name: "nightly", status: "active", nextTickAt: expectedNext, overlap: "buffer" })]);

    expect(await cli(store, "schedules", "pause", "nightly")).toMatchObject({ code: 0, stdout: "nightly: paused.\n" });
    expect((await engine.getSchedule("nightly")).status).toBe("paused");
    expect((await cli(store, "schedules")).stdout).toMatch(/nightly.*paused\s+-/);
    const resumed = await cli(store, "schedules", "resume", "nightly");
    expect(resumed).toMatchObject({ code: 0 });
    expect(resumed.stdout).toMatch(/^nightly: resumed; next tick /);
    expect((await engine.getSchedule("nightly")).status).toBe("active");
    expect((await engine.store.listAudit({ action: "schedule.pause" })).map((e) => e.target)).toEqual(["nightly"]);

    // --store given on the command line (no CAIRN_STORE), after the name or before the subcommand.
    const { CAIRN_STORE: _, ...noStoreEnv } = process.env;
    const flagged = await run(process.execPath, [MAIN, "schedules", "pause", "nightly", "--store", store], { env: noStoreEnv });
    expect(flagged.stdout).toBe("nightly: paused.\n");
    expect((await engine.getSchedule("nightly")).status).toBe("paused");
    await run(process.execPath, [MAIN, "schedules", "--store", store, "resume", "nightly"], { env: noStoreEnv });
    expect((await engine.getSchedule("nightly")).status).toBe("active");

    const unknown = await cli(store, "schedules", "pause", "nope");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/SCHEDULE_NOT_FOUND|Schedule "nope" does not exist/);
    const bad = await cli(store, "schedules", "pause", "no spaces");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Schedule name/);
    const typo = await cli(store, "schedules", "remove", "nightly");
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/Unknown subcommand "remove" of schedules: use pause, resume or delete/);
    expect(await cli(store, "schedules", "delete", "nightly")).toMatchObject({ code: 0 });
    await expect(engine.getSchedule("nightly")).rejects.toMatchObject({ code: "SCHEDULE_NOT_FOUND" });
    expect((await engine.store.listAudit({ action: "schedule.delete" })).map((e) => e.target)).toEqual(["nightly"]);
  }, 60_000);

  it("cairn worker saves and fires the schedules its workflow modules export", async () => {
    requireBuild();
    const dir = tempDir();
    const store = `sqlite:${join(dir, "cairn.db")}`;
    const entry = fileURLToPath(new URL("../../dist/src/index.js", import.meta.url));
    const module = join(dir, "jobs.mjs");
    writeFileSync(
      module,
      `import { defineSchedule, defineWorkflow } from ${JSON.stringify(entry)};
export const ping = defineWorkflow({ name: "ping", version: "1", run: async () => "pong" });
export const schedules = [defineSchedule({ name: "every-second", workflow: ping, cron: "* * * * * *", overlap: "allow" })];
`,
    );
    const child = spawn(process.execPath, [MAIN, "worker", "--workflows", module, "--poll-ms", "20"], { env: { ...process.env, CAIRN_STORE: store } });
    onCleanup(() => void child.kill("SIGKILL"));
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    await waitFor(() => stdout.includes("ready"), { timeoutMs: 20_000, what: "the worker is ready" });
    const engine = await createEngine({ store, logger: silentLogger });
    onCleanup(() => engine.close());
    const fired = await waitFor(
      async () => {
        const runs = (await engine.listRuns({ status: "completed" })).runs;
        return runs.find((r) => r.runId.startsWith("schedule:every-second:"));
      },
      { timeoutMs: 20_000, what: "a tick's run completed" },
    );
    expect(fired.output).toBe("pong");
    const listed = JSON.parse((await cli(store, "schedules", "--json")).stdout) as { name: string; workflow: string }[];
    expect(listed).toEqual([expect.objectContaining({ name: "every-second", workflow: "ping" })]);
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
  }, 60_000);
});
