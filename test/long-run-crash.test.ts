/**
 * Long agent runs and threads whose loop state outgrows the payload inline limit, under SIGKILL: a
 * real worker process is killed right after a snapshot that went to a blob, and the next worker must
 * resume from it exactly. Ledgers outside the database count provider calls and tool effects.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentResult } from "../src/agent/agent.js";
import { transcriptProblems } from "../src/agent/model/messages.js";
import type { ThreadState } from "../src/agent/thread.js";
import { parseMarker } from "../src/core/payloads.js";
import { createEngine } from "../src/engine/create-engine.js";
import type { Engine } from "../src/engine/engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { onCleanup } from "./support/engines.js";
import { finishCleanly, spawnWorker, supervise, type Supervision } from "./support/processes.js";
import { rawSqlite } from "./support/raw-databases.js";
import type { RawDatabase } from "./support/payloads-suite.js";
// @ts-expect-error plain JS fixture
import { AGENT_TURNS, workflows } from "./fixtures/long-run-workflows.mjs";

const FIXTURE = resolve("test/fixtures/long-run-workflows.mjs");

interface Scenario {
  db: RawDatabase;
  engine: Engine;
  ledger: string;
  env: Record<string, string>;
}

async function setUp(inlineLimit: number | undefined): Promise<Scenario> {
  const db = await rawSqlite();
  const ledger = join(resolve(db.url.slice("sqlite:".length), ".."), "ledger.txt");
  writeFileSync(ledger, "");
  const payloads = inlineLimit === undefined ? {} : { inlineLimit };
  const engine = await createEngine({ store: db.url, workflows, logger: silentLogger, payloads });
  onCleanup(() => engine.close());
  const env: Record<string, string> = { CAIRN_TEST_STORE: db.url, CAIRN_TEST_WORKFLOWS: FIXTURE, CAIRN_TEST_LEDGER: ledger, CAIRN_TEST_LEASE_MS: "300" };
  if (inlineLimit !== undefined) env.CAIRN_PAYLOAD_INLINE_LIMIT = String(inlineLimit);
  return { db, engine, ledger, env };
}

const lines = (scenario: Scenario) => readFileSync(scenario.ledger, "utf8").split("\n").filter(Boolean);

/** The stored form of the run's newest loop snapshot: a blob reference once the state passed the limit. */
async function newestSnapshot(scenario: Scenario, runId: string): Promise<{ seq: number; payload: string }> {
  const rows = await scenario.db.sql<{ seq: number; payload: string }>(
    `SELECT seq, payload FROM journal WHERE run_id = '${runId}' AND kind = 'loop.snapshot' ORDER BY seq DESC LIMIT 1`,
  );
  expect(rows, `a snapshot of ${runId}`).toHaveLength(1);
  return rows[0]!;
}

/** Runs a worker armed to SIGKILL itself at the `hit`th snapshot it writes; asserts it died there. */
async function killAtSnapshot(s: Supervision, hit: number): Promise<void> {
  const worker = spawnWorker({ ...s.env, CAIRN_CRASH_AT: `after-snapshot:${hit}` });
  await worker.ready;
  expect(await supervise(worker, s)).toBe("SIGKILL");
  await worker.exited;
}

describe("loop state past the inline limit, under SIGKILL", () => {
  it("an agent's snapshots stay small past 80 KB of transcript (they refer to its message rows), and it resumes from one", async () => {
    const scenario = await setUp(undefined);
    const runId = "long-1";
    await scenario.engine.start("long-agent", { prompt: "Write notes." }, { runId });
    const s: Supervision = { env: scenario.env, tick: async () => undefined, done: async () => (await scenario.engine.getRun(runId)).status === "completed" };
    // Snapshots every 2 turns, 4 KB a turn: by the 10th (turn 20) the transcript is ~80 KB, past the
    // 64 KiB inline limit, but the snapshot holds a reference to the message rows, not the messages.
    await killAtSnapshot(s, 10);
    const snapshot = await newestSnapshot(scenario, runId);
    expect(parseMarker(snapshot.payload)?.kind, "the newest snapshot stays inline").toBeUndefined();
    expect(snapshot.payload.length, "the newest snapshot's size").toBeLessThan(8 * 1024);

    await finishCleanly(s);
    const result = (await scenario.engine.result(runId, { timeoutMs: 1000 })) as AgentResult;
    expect(result.text).toBe(`done after ${AGENT_TURNS} notes`);
    expect(transcriptProblems(result.messages)).toEqual([]);
    expect(result.messages.filter((message) => message.role === "tool")).toHaveLength(AGENT_TURNS);
    // Each tool effect once: no turn before the snapshot ran again.
    const tools = lines(scenario).filter((line) => line.startsWith("tool "));
    expect(tools).toHaveLength(AGENT_TURNS);
    expect(new Set(tools.map((line) => line.split(" ")[1])).size).toBe(AGENT_TURNS);
    // No provider call whose answer was journaled was sent again.
    const journal = await scenario.engine.journal(runId);
    for (let turn = 0; turn <= AGENT_TURNS; turn++) {
      const calls = lines(scenario).filter((line) => line === `model ${turn}`).length;
      const intents = journal.filter((e) => e.kind === "step.started" && e.opKey === `turn#0/${turn}/model#0`).length;
      expect(calls, `model calls of turn ${turn}`).toBeGreaterThanOrEqual(1);
      expect(calls, `model calls of turn ${turn} (${intents} intents)`).toBeLessThanOrEqual(intents);
    }
  });

  it("a thread resumes from a snapshot that went to a blob (8 KiB limit)", async () => {
    const scenario = await setUp(8192);
    const threadId = "thread-1";
    const MESSAGES = 10;
    await scenario.engine.start("chat.thread", {}, { runId: threadId });
    for (let n = 1; n <= MESSAGES; n++) await scenario.engine.sendEvent(threadId, "message", { prompt: `message ${n}`, turnId: `m${n}` }, { eventId: `m${n}` });
    await scenario.engine.sendEvent(threadId, "message", { close: true }, { eventId: "close" });
    const s: Supervision = {
      env: scenario.env,
      tick: async () => undefined,
      done: async () => (await scenario.engine.getRun(threadId)).status === "completed",
    };
    // One snapshot per message, ~2 KB a message: the 6th (~13 KB) is past 8 KiB.
    await killAtSnapshot(s, 6);
    expect(parseMarker((await newestSnapshot(scenario, threadId)).payload)?.kind, "the newest snapshot is offloaded").toBe("blob");

    await finishCleanly(s);
    const state = (await scenario.engine.result(threadId, { timeoutMs: 1000 })) as ThreadState;
    expect(state.turns).toBe(MESSAGES);
    expect(transcriptProblems(state.messages)).toEqual([]);
    const users = state.messages.filter((message) => message.role === "user").map((message) => message.content);
    expect(users).toEqual(Array.from({ length: MESSAGES }, (_, i) => `message ${i + 1}`));
    // Each message was answered by one turn run, and no answered turn was asked again.
    for (let n = 1; n <= MESSAGES; n++) expect((await scenario.engine.getRun(`${threadId}:m${n}`)).status).toBe("completed");
    const replies = lines(scenario).filter((line) => line.startsWith("reply "));
    expect(new Set(replies).size).toBe(MESSAGES);
    expect(replies.length).toBeLessThanOrEqual(MESSAGES + 1);
  });
});
