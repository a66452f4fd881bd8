/**
 * The code-migration example under SIGKILL: real worker processes run it against a real directory
 * and are killed at named crash points and at random moments, while this process plays the people
 * (approve the plan, fix the escalated file by hand, sign off). The files and the ledger outside
 * the database prove that no file was migrated twice.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine, silentLogger, type Engine } from "cairn";
import { onCleanup, tempDir } from "../test/support/engines.js";
import { crashAtPoint, finishCleanly, killAtRandom, type Supervision } from "../test/support/processes.js";
import { checkSource, codeMigration, listSourceFiles, seedRepository, type MigrationResult } from "./code-migration.js";
import { workflows } from "./index.js";
import { LEDGER_ENV, readLedger } from "./ledger.js";
import { STEP_MS_ENV } from "./research-agent.js";
import { fixReportsByHand } from "./test-helpers.js";

// Bounded by its rounds, not by the clock: a loaded machine only makes each round slower.
const RANDOM_KILLS_TIMEOUT_MS = 180_000;
// Random kills that all land before a loaded worker makes progress are failed recoveries in a row;
// these tests are about exactly-once effects, so the dead-letter limit (tested in deploys) is off.
const NO_DEAD_LETTER = { CAIRN_TEST_MAX_RECOVERY: "0" };

const FIXTURE = resolve("test/fixtures/code-migration-workflows.mjs");
const RUN = "migration";

interface Scenario {
  engine: Engine;
  env: Record<string, string>;
  ledger: string;
  repo: string;
}

async function setUp(): Promise<Scenario> {
  const dir = tempDir();
  const store = `sqlite:${join(dir, "cairn.db")}`;
  const repo = join(dir, "repo");
  const ledger = join(dir, "ledger.txt");
  seedRepository(repo);
  const engine = await createEngine({ store, workflows, logger: silentLogger });
  onCleanup(() => engine.close());
  await engine.start(codeMigration, { dir: repo, batchSize: 2 }, { runId: RUN });
  const env = {
    CAIRN_TEST_STORE: store,
    CAIRN_TEST_WORKFLOWS: FIXTURE,
    CAIRN_TEST_LEASE_MS: "300",
    [LEDGER_ENV]: ledger,
    // The scripted model, whatever keys the environment holds.
    ANTHROPIC_API_KEY: "",
    OPENAI_API_KEY: "",
    CAIRN_MODEL: "",
  };
  return { engine, env, ledger, repo };
}

const finished = async (scenario: Scenario): Promise<boolean> => (await scenario.engine.getRun(RUN)).status === "completed";

/** The people: answer what the run asks ("fixed" after fixing the reports by hand for an escalation). */
function supervision(scenario: Scenario): Supervision {
  return {
    env: scenario.env,
    done: () => finished(scenario),
    async tick() {
      for (const request of await scenario.engine.listHumanRequests({ status: "pending" })) {
        const option = request.opKey.startsWith("escalate") ? "fixed" : "approve";
        if (option === "fixed") fixReportsByHand(scenario.repo);
        await scenario.engine.respondToHuman(request.requestId, { action: "answer", option, by: "tester" }).catch(() => undefined);
      }
    },
  };
}

async function verify(scenario: Scenario): Promise<void> {
  const result = (await scenario.engine.result(RUN, { timeoutMs: 1000 })) as MigrationResult;
  expect(result).toMatchObject({
    status: "signed-off",
    batches: [
      { files: ["src/invoices.js", "src/orders.js"], outcome: "passed", fixes: 1, escalations: 0 },
      { files: ["src/reports.js", "src/search.js"], outcome: "fixed-by-hand", fixes: 2, escalations: 1 },
      { files: ["src/users.js"], outcome: "passed", fixes: 0, escalations: 0 },
    ],
  });
  const ledger = readLedger(scenario.ledger);
  const stamps = new Set<string>();
  for (const file of listSourceFiles(scenario.repo)) {
    const text = readFileSync(join(scenario.repo, file), "utf8");
    // Migrated exactly once: a second migration would add a second stamp and a second ledger line.
    const fileStamps = [...text.matchAll(/^\/\/ migrated-by: (\S+)$/gm)].map((m) => m[1]!);
    expect(fileStamps, `${file}:\n${text}`).toHaveLength(1);
    // The ledger line is appended just after the stamp is written: a SIGKILL between the two leaves
    // a stamped file without its line (reconcile then finds the stamp and does not migrate again).
    // So at most one line, and it names the stamp; the single stamp is the proof of one migration.
    const lines = ledger.filter((line) => line.startsWith(`migrate ${file} `));
    expect(lines.length, `${file}: ${lines.join(" | ")}`).toBeLessThanOrEqual(1);
    for (const line of lines) expect(line, file).toBe(`migrate ${file} ${fileStamps[0]}`);
    expect(checkSource(text), file).toBeNull();
    stamps.add(fileStamps[0]!);
  }
  expect(stamps.size).toBe(5); // one migrate call (one idempotency key) per file
  // Every question was asked once and answered once.
  const journal = await scenario.engine.journal(RUN);
  expect(journal.filter((e) => e.kind === "human.answered").map((e) => e.opKey)).toEqual(["plan-review#0", "escalate#0", "sign-off#0"]);
}

const POINTS: [string, string][] = [
  ["after-intent", "tool-migrate"], // a migration's intent is durable; the file is untouched
  ["after-effect", "tool-migrate"], // the file is migrated and stamped; the outcome is not journaled
  ["after-outcome", "tool-fix"], // an auto-fix is journaled
  ["after-effect", "/model"], // the model answered; the answer is not journaled
  ["after-consume", "escalate"], // the person's "fixed" is journaled
  ["after-effect", "verify"], // the workflow's own check ran
  ["before-complete", ""], // a batch's agent run (or the whole run) is about to complete
];

describe("code-migration example under SIGKILL", () => {
  it.each(POINTS)("at %s %s: every file migrated exactly once, every question answered once", async (point, match) => {
    const scenario = await setUp();
    const crashes = await crashAtPoint(supervision(scenario), point, match);
    expect(crashes, `${point} ${match} was reached`).toBeGreaterThan(0);
    await finishCleanly(supervision(scenario));
    await verify(scenario);
  });

  it(
    "survives SIGKILLs at random moments",
    async () => {
      const scenario = await setUp();
      Object.assign(scenario.env, NO_DEAD_LETTER);
      const kills = await killAtRandom(supervision(scenario), { [STEP_MS_ENV]: "25" }, 12, 200);
      expect(kills).toBeGreaterThanOrEqual(2);
      await finishCleanly(supervision(scenario));
      await verify(scenario);
    },
    RANDOM_KILLS_TIMEOUT_MS,
  );
});
