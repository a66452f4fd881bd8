// A run of a fixture agent whose model (or summary model) hangs on every send, and workers that are
// SIGKILLed while a send is in flight: the set-up of the possibly-billed spend tests. Each send is
// logged in a ledger file outside the engine's database.
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createEngine } from "../../src/engine/create-engine.js";
import type { Engine } from "../../src/engine/engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import { waitFor } from "../../src/testing/wait-for.js";
import { onCleanup, tempDir } from "./engines.js";
import { requireBuild, spawnWorker } from "./processes.js";
// @ts-expect-error plain JS fixture
import { workflows } from "../fixtures/agent-workflows.mjs";

const FIXTURE = resolve("test/fixtures/agent-workflows.mjs");

/** Starts `workflow` as `runId` on a fresh SQLite store; `killMidCall` runs a worker until the next send is in flight, then SIGKILLs it. */
export async function setUp(workflow: string, runId: string) {
  requireBuild();
  const dir = tempDir();
  const store = `sqlite:${join(dir, "cairn.db")}`;
  const ledger = join(dir, "ledger.txt");
  writeFileSync(ledger, "");
  const engine: Engine = await createEngine({ store, workflows, logger: silentLogger });
  onCleanup(() => engine.close());
  await engine.start(workflow, { prompt: "go" }, { runId });
  const env = { CAIRN_TEST_STORE: store, CAIRN_TEST_WORKFLOWS: FIXTURE, CAIRN_TEST_LEDGER: ledger, CAIRN_TEST_LEASE_MS: "300" };
  const hanging = workflow === "summary-crash-loop" ? "summary hanging" : "model hanging";
  const sends = () =>
    readFileSync(ledger, "utf8")
      .split("\n")
      .filter((line) => line === hanging).length;
  /** A worker that is SIGKILLed as soon as the next model request is in flight. */
  const killMidCall = async () => {
    const before = sends();
    const worker = spawnWorker(env);
    await worker.ready;
    await waitFor(() => sends() > before, { timeoutMs: 20_000, what: "a model request in flight" });
    worker.child.kill("SIGKILL");
    await worker.exited;
  };
  return { engine, env, sends, killMidCall };
}
