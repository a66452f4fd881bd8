/**
 * Fallback models under SIGKILL, through the real SDKs: a `cairn worker` process runs an agent whose
 * primary (OpenAI) answers 500 and whose fallback (Anthropic) answers. The worker is killed while the
 * fallback streams turn 2. The resumed run sends nothing whose answer is journaled — not turn 1 to
 * either model, not turn 2 to the primary again — and finishes on the fallback.
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

const FIXTURE = resolve("test/fixtures/sdk-agent-workflows.mjs");
const CLI = resolve("dist/src/cli/main.js");
const turnOf = (entry: LedgerEntry) => (JSON.stringify(entry.body).includes("result-1") ? 2 : 1);

let provider: ProviderServer;
let release: () => void = () => undefined;
beforeAll(async () => {
  const held = new Promise<void>((resolveHold) => (release = resolveHold));
  let heldOnce = false;
  provider = await new ProviderServer({
    respond: (entry) => {
      if (entry.format === "responses") return { status: 500, message: "primary is down" };
      if (turnOf(entry) === 1) return { text: "Recording.", toolCalls: [{ id: "toolu_1", name: "record", arguments: { step: 1 } }] };
      // Turn 2's first send is held mid-stream until the worker has been killed.
      const hold = heldOnce ? {} : { hold: held, holdAfter: 2 };
      heldOnce = true;
      return { text: "Recorded step 1. Done.", ...hold };
    },
  }).start();
});
afterAll(async () => {
  release();
  await provider.close();
});

function spawnCliWorker(env: Record<string, string>, store: string) {
  const child = spawn(process.execPath, [CLI, "worker", "--store", store, "--workflows", FIXTURE, "--lease-ms", "300", "--poll-ms", "10"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "ignore"],
  });
  const exited = new Promise<void>((resolveExit) => child.once("exit", () => resolveExit()));
  onCleanup(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return { child, exited };
}

describe("fallback models under SIGKILL", () => {
  it("a resume re-sends neither the primary's failed call nor the fallback's journaled answer", async () => {
    requireBuild();
    const dir = tempDir();
    const store = `sqlite:${join(dir, "cairn.db")}`;
    const ledger = join(dir, "effects.txt");
    writeFileSync(ledger, "");
    const engine = await createEngine({ store, workflows, logger: silentLogger });
    onCleanup(() => engine.close());
    await engine.start("fallback-recorder", { prompt: "Record step 1." }, { runId: "fb-crash" });
    const env = { CAIRN_TEST_PROVIDER_URL: provider.url, CAIRN_TEST_LEDGER: ledger };
    const sent = (model: string, turn: number) => provider.requests.filter((r) => r.body?.model === model && turnOf(r) === turn).length;

    const first = spawnCliWorker(env, store);
    await waitFor(() => sent("claude-up", 2) === 1, { timeoutMs: 20_000, what: "turn 2 streaming from the fallback" });
    first.child.kill("SIGKILL");
    await first.exited;
    expect({ a1: sent("gpt-down", 1), b1: sent("claude-up", 1), a2: sent("gpt-down", 2), b2: sent("claude-up", 2) }).toEqual({ a1: 2, b1: 1, a2: 2, b2: 1 });

    release();
    const second = spawnCliWorker(env, store);
    const result = (await engine.result("fb-crash", { timeoutMs: 30_000 })) as AgentResult;
    second.child.kill("SIGTERM");
    await second.exited;
    expect(result.text).toBe("Recorded step 1. Done.");
    // Turn 1 went to nobody again; turn 2's primary failure is journaled, so only the cut send is repeated.
    expect({ a1: sent("gpt-down", 1), b1: sent("claude-up", 1), a2: sent("gpt-down", 2), b2: sent("claude-up", 2) }).toEqual({ a1: 2, b1: 1, a2: 2, b2: 2 });
    expect(readFileSync(ledger, "utf8").split("\n").filter(Boolean)).toHaveLength(1);
    // Both answers were priced by the fallback (10 input × $1/M + 5 output × $2/M = 20 µ$ each), and the cut send is possibly billed.
    expect(result.totals.costMicros).toBe(40);
    expect(result.totals.possiblyBilledMicros ?? 0).toBeGreaterThan(0);
    const journal = await engine.journal("fb-crash");
    const answered = journal.filter((e) => e.kind === "step.completed" && /model#\d+$/.test(e.opKey ?? ""));
    expect(answered.map((e) => (e.data as { result: { answeredBy?: string } }).result.answeredBy)).toEqual(["claude-up", "claude-up"]);
  });
});
