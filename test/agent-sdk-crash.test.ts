/**
 * SIGKILL through the real SDK path: a `cairn worker` process runs an agent whose model is a real SDK
 * client (openai, @anthropic-ai/sdk, ai + @ai-sdk/openai) streaming from a local provider server, and
 * is killed at random moments, several times. The server's request ledger and a tool ledger (both
 * outside the worker) show that no model call whose response was journaled was sent again and that
 * each tool effect happened once.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentResult } from "../src/agent/agent.js";
import { createEngine } from "../src/engine/create-engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { waitFor } from "../src/testing/wait-for.js";
import { onCleanup, tempDir } from "./support/engines.js";
import { requireBuild } from "./support/processes.js";
import { ProviderServer, type LedgerEntry } from "./support/provider-server/index.mjs";
// @ts-expect-error plain JS fixture
import { workflows } from "./fixtures/sdk-agent-workflows.mjs";

// Bounded by its rounds, not by the clock: a loaded machine only makes each round slower.
const RANDOM_KILLS_TIMEOUT_MS = 180_000;

const FIXTURE = resolve("test/fixtures/sdk-agent-workflows.mjs");
const CLI = resolve("dist/src/cli/main.js");

/** How many tool results a request carries: the turn it asks for (0 to 3). */
function turnOf(entry: LedgerEntry): number {
  return new Set(JSON.stringify(entry.body).match(/result-\d/g) ?? []).size;
}

let provider: ProviderServer;
beforeAll(async () => {
  // Every answer streams slowly (about 150 ms), so kills land mid-generation too.
  provider = await new ProviderServer({
    respond: (entry) => {
      const turn = turnOf(entry);
      if (turn >= 3) return { text: "Recorded steps 1 to 3. Done.", eventDelayMs: 10 };
      return { text: `Recording step ${turn + 1}.`, toolCalls: [{ id: `call_${turn + 1}`, name: "record", arguments: { step: turn + 1 } }], eventDelayMs: 10 };
    },
  }).start();
});
afterAll(() => provider.close());

function spawnCliWorker(env: Record<string, string>, store: string) {
  const child = spawn(process.execPath, [CLI, "worker", "--store", store, "--workflows", FIXTURE, "--lease-ms", "300", "--poll-ms", "10"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (chunk) => (out += chunk));
  child.stderr.on("data", (chunk) => (out += chunk));
  const exited = new Promise<void>((resolveExit) => child.once("exit", () => resolveExit()));
  onCleanup(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return { child, exited, output: () => out };
}

/** The model id each SDK's requests carry, to tell them apart in the shared ledger. */
const MODEL: Record<string, string> = { openai: "gpt-test", anthropic: "claude-test", "ai-sdk": "gpt-test-ai" };

describe.each(["openai", "anthropic", "ai-sdk"])("agent on the real %s SDK under SIGKILL", (sdk) => {
  it(
    "re-sends no journaled model call and applies each tool effect once",
    async () => {
      requireBuild();
      const dir = tempDir();
      const store = `sqlite:${join(dir, "cairn.db")}`;
      const ledger = join(dir, "effects.txt");
      writeFileSync(ledger, "");
      const engine = await createEngine({ store, workflows, logger: silentLogger });
      onCleanup(() => engine.close());
      const runId = `sdk-${sdk}`;
      await engine.start("recorder", { prompt: "Record the steps." }, { runId });
      const env = { CAIRN_TEST_SDK: sdk, CAIRN_TEST_PROVIDER_URL: provider.url, CAIRN_TEST_LEDGER: ledger };
      const mine = () => provider.requests.filter((r) => r.body?.model === MODEL[sdk]);
      const done = async () => (await engine.getRun(runId)).status === "completed";
      // After three sends of one call cut short by kills, the run asks before sending it again: say resend.
      const resend = async () => {
        for (const request of await engine.listHumanRequests({ status: "pending", runId }))
          if (request.options.includes("resend"))
            await engine.respondToHuman(request.requestId, { action: "answer", option: "resend", by: "tester" }).catch(() => undefined);
      };

      // Kill workers at varied moments until the run completes or the kills are done.
      let kills = 0;
      for (let round = 0; round < 12 && !(await done()); round++) {
        const worker = spawnCliWorker(env, store);
        const sent = mine().length;
        if (round < 4) {
          // Wait until this worker is talking to the provider, then kill it a little later: mid-stream or after.
          await waitFor(async () => (await resend(), mine().length > sent || (await done())), { timeoutMs: 20_000, what: "a model request" });
          await new Promise((r) => setTimeout(r, 20 + ((round * 67) % 200)));
          if (worker.child.exitCode === null) {
            worker.child.kill("SIGKILL");
            kills += 1;
          }
          await worker.exited;
        } else {
          await waitFor(async () => (await resend(), done()), { timeoutMs: 30_000, what: "the run to complete" });
          worker.child.kill("SIGTERM");
          await worker.exited;
        }
      }
      expect(kills).toBeGreaterThanOrEqual(3);
      const run = await engine.getRun(runId);
      expect(run.status, `${JSON.stringify(run)} ${JSON.stringify((await engine.journal(runId)).slice(-6))}`).toBe("completed");

      const result = (await engine.result(runId, { timeoutMs: 1000 })) as AgentResult;
      expect(result.text).toBe("Recorded steps 1 to 3. Done.");
      // Each tool effect once per key: three keys, one line each.
      const effects = readFileSync(ledger, "utf8").split("\n").filter(Boolean);
      expect(effects.map((l) => l.split(" ")[3]).sort()).toEqual(["1", "2", "3"]);
      expect(new Set(effects.map((l) => l.split(" ")[1])).size).toBe(3);
      // No model call was sent again once its response was journaled: requests per turn ≤ intents of that turn,
      // and every turn's last request is the one whose answer the journal holds.
      const journal = await engine.journal(runId);
      const requests = mine();
      for (let turn = 0; turn <= 3; turn++) {
        const sentForTurn = requests.filter((r) => turnOf(r) === turn).length;
        // A call resent after a person said so is model#1, #2…; a step that refused to send again journals `halted`.
        const key = new RegExp(`^turn#0/${turn}/model#\\d+$`);
        const intents = journal.filter((e) => e.kind === "step.started" && key.test(e.opKey ?? "")).length;
        const completed = journal.filter(
          (e) => e.kind === "step.completed" && key.test(e.opKey ?? "") && !(e.data as { result: { halted?: string } }).result?.halted,
        ).length;
        expect(completed, `turn ${turn} journaled once`).toBe(1);
        expect(sentForTurn, `turn ${turn}: ${sentForTurn} request(s) for ${intents} intent(s)`).toBeLessThanOrEqual(intents);
        expect(sentForTurn).toBeGreaterThanOrEqual(1);
      }
      // Sends cut short before their response was journaled are counted as possibly billed, never as nothing.
      const answeredCalls = journal.filter(
        (e) => e.kind === "step.completed" && /\/model#\d+$/.test(e.opKey ?? "") && !(e.data as { result: { halted?: string } }).result?.halted,
      ).length;
      if (requests.length > answeredCalls) expect(result.totals.possiblyBilledMicros ?? 0).toBeGreaterThan(0);
      // The agent streamed every call.
      expect(requests.filter((r) => !r.stream).map((r) => r.path)).toEqual([]);
    },
    RANDOM_KILLS_TIMEOUT_MS,
  );
});
