/**
 * Crash tests of the agent loop: a real worker process runs a file-migrating agent and is killed with
 * SIGKILL at every boundary of the loop (after a model call returns, after it is journaled, after a
 * tool's intent, inside a tool after its effect, after an approval is taken, during summarization,
 * after a snapshot). The files and a ledger outside the database show what really happened.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { transcriptProblems } from "../src/agent/model/messages.js";
import type { AgentResult } from "../src/agent/agent.js";
import { createEngine } from "../src/engine/create-engine.js";
import type { Engine } from "../src/engine/engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { onCleanup, tempDir } from "./support/engines.js";
import { crashAtPoint, finishCleanly, killAtRandom, requireBuild, type Supervision } from "./support/processes.js";
// @ts-expect-error plain JS fixture
import { workflows } from "./fixtures/agent-workflows.mjs";

// Bounded by its rounds, not by the clock: a loaded machine only makes each round slower.
const RANDOM_KILLS_TIMEOUT_MS = 180_000;
// Random kills that all land before a loaded worker makes progress are failed recoveries in a row;
// these tests are about exactly-once effects, so the dead-letter limit (tested in deploys) is off.
const NO_DEAD_LETTER = { CAIRN_TEST_MAX_RECOVERY: "0" };

const FIXTURE = resolve("test/fixtures/agent-workflows.mjs");
const RUN = "migration-1";
const FINAL = "Migrated a, b and c, and deployed to staging.";

interface Scenario {
  engine: Engine;
  env: Record<string, string>;
  ledger: string;
  files: string;
}

async function setUp(): Promise<Scenario> {
  requireBuild();
  const dir = tempDir();
  const store = `sqlite:${join(dir, "cairn.db")}`;
  const ledger = join(dir, "ledger.txt");
  const files = join(dir, "repo");
  mkdirSync(files);
  for (const name of ["a", "b", "c"]) writeFileSync(join(files, `${name}.txt`), `import ${name} from "api v1"`);
  writeFileSync(ledger, "");
  const engine = await createEngine({ store, workflows, logger: silentLogger });
  onCleanup(() => engine.close());
  await engine.start("migrator", { prompt: "Migrate the repository, then deploy it to staging." }, { runId: RUN });
  return {
    engine,
    ledger,
    files,
    env: { CAIRN_TEST_STORE: store, CAIRN_TEST_WORKFLOWS: FIXTURE, CAIRN_TEST_LEDGER: ledger, CAIRN_TEST_FILES: files, CAIRN_TEST_LEASE_MS: "300" },
  };
}

const finished = (scenario: Scenario) => async () => (await scenario.engine.getRun(RUN)).status === "completed";

/** A person who approves whatever the run asks (and resends a model call that crashes kept interrupting). */
function supervision(scenario: Scenario): Supervision {
  return {
    env: scenario.env,
    done: finished(scenario),
    async tick() {
      for (const request of await scenario.engine.listHumanRequests({ status: "pending", runId: RUN })) {
        const option = request.options.includes("resend") ? "resend" : "approve";
        await scenario.engine.respondToHuman(request.requestId, { action: "answer", option, by: "tester" }).catch(() => undefined);
      }
    },
  };
}

async function verify(scenario: Scenario): Promise<void> {
  const result = (await scenario.engine.result(RUN, { timeoutMs: 1000 })) as AgentResult;
  expect(result.text).toBe(FINAL);
  expect(transcriptProblems(result.messages)).toEqual([]);
  // Each file was migrated exactly once: a second migration would read "v3".
  for (const name of ["a", "b", "c"]) expect(readFileSync(join(scenario.files, `${name}.txt`), "utf8")).toBe(`import ${name} from "api v2"`);
  const lines = readFileSync(scenario.ledger, "utf8").split("\n").filter(Boolean);
  // No tool effect was applied twice.
  const tools = lines.filter((l) => l.startsWith("tool ")).map((l) => l.split(" ")[1]!);
  expect(tools.sort()).toEqual([`${RUN}:tool:0:m1`, `${RUN}:tool:0:m2`, `${RUN}:tool:1:m3`, `${RUN}:tool:2:d1`]);
  // No model call was made again once its result was journaled: calls per turn ≤ intents of that turn's step.
  const journal = await scenario.engine.journal(RUN);
  const turns = ["start", "m2", "m3", "d1"];
  for (const [i, turn] of turns.entries()) {
    const calls = lines.filter((l) => l === `model ${turn}`).length;
    const intents = journal.filter((e) => e.kind === "step.started" && new RegExp(`^turn#0/${i}/model#\\d+$`).test(e.opKey ?? "")).length;
    expect(calls, `model calls for turn ${turn}`).toBeGreaterThanOrEqual(1);
    expect(calls, `model calls for turn ${turn} (${intents} intents)`).toBeLessThanOrEqual(intents);
  }
  // Budgets are folds of the journal: the totals count every journaled call, across every crash.
  // (A model step that refused to send again after three interrupted sends journals `halted`, not a call.)
  const completedCalls = journal.filter(
    (e) => e.kind === "step.completed" && /\/(model|summarize)#\d+$/.test(e.opKey ?? "") && !(e.data as { result: { halted?: string } }).result?.halted,
  ).length;
  expect(result.totals.steps).toBe(completedCalls);
  expect(result.totals.toolCalls).toBe(4);
  // The approval, plus any "resend?" question after three sends of one model call were cut short.
  expect(journal.filter((e) => e.kind === "human.requested" && e.opKey?.includes("/approve-"))).toHaveLength(1);
  expect(journal.some((e) => e.opKey?.endsWith("/summarize#0"))).toBe(true);
}

const BOUNDARIES: [string, string][] = [
  ["after-effect", "/model"], // the provider answered; the answer is not journaled yet
  ["after-outcome", "/model"], // the answer is journaled
  ["after-intent", "/tool-"], // a tool's intent is durable; it has not run
  ["after-effect", "/tool-"], // inside the tool, after its effect, before its outcome
  ["after-consume", "/approve-"], // the approval decision is journaled
  ["after-effect", "/summarize"], // during summarization
  ["after-outcome", "/summarize"],
  ["after-snapshot", ""],
];

describe("agent loop under SIGKILL", () => {
  it.each(BOUNDARIES)("at %s %s: no model call billed twice, no tool effect applied twice, transcript and budget intact", async (point, match) => {
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
      const kills = await killAtRandom(supervision(scenario), { CAIRN_TEST_STEP_MS: "30" }, 10, 150);
      expect(kills).toBeGreaterThanOrEqual(2);
      await finishCleanly(supervision(scenario));
      await verify(scenario);
    },
    RANDOM_KILLS_TIMEOUT_MS,
  );
});
