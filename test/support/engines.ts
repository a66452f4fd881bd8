import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "vitest";
import { createEngine } from "../../src/engine/create-engine.js";
import type { Engine, EngineOptions } from "../../src/engine/engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import { onCleanup } from "./cleanups.js";
import { freshPgUrl, pgReachable } from "./pg-schema.js";

export { onCleanup };

/** A fresh temp directory, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "cairn-test-"));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A store engine tests can run on. */
export type StoreKind = "memory" | "sqlite" | "postgres";

/**
 * The store kinds engine and agent suites run against (`describe.each(STORE_KINDS)`): memory and
 * SQLite. A suite's `.pg.test.ts` twin runs the same file on PostgreSQL with {@link runSuiteOnPostgres}.
 */
export const STORE_KINDS: StoreKind[] = ["memory", "sqlite"];

/**
 * Runs a suite file written with `describe.each(STORE_KINDS)` on PostgreSQL only, from its
 * `.pg.test.ts` twin: `await runSuiteOnPostgres(() => import("./engine.test.js"))`. Each test gets a
 * fresh schema. When the test server is unreachable (outside CI) the twin is skipped with a message.
 */
export async function runSuiteOnPostgres(load: () => Promise<unknown>): Promise<void> {
  const reachable = await pgReachable();
  STORE_KINDS.splice(0, STORE_KINDS.length, ...(reachable ? (["postgres"] as const) : []));
  if (!reachable) {
    describe.skip("on postgres (the test server is unreachable)", () => it("runs", () => undefined));
    return;
  }
  await load();
}

/** A store URL of the given kind, isolated to this test (PostgreSQL: a fresh schema, dropped after it, on the caller's clock). */
export function storeUrl(kind: StoreKind): string {
  if (kind === "memory") return "memory:";
  if (kind === "sqlite") return `sqlite:${join(tempDir(), "cairn.db")}`;
  const url = new URL(freshPgUrl({ recycle: true }));
  url.searchParams.set("allowWeakDurability", "1");
  // The suites drive time with the engine's `clock` option, as they do on the other stores.
  url.searchParams.set("clock", "caller");
  return url.toString();
}

/** An engine on a fresh store, closed after the test. */
export async function testEngine(kind: StoreKind, options: EngineOptions = {}): Promise<Engine> {
  const engine = await createEngine({ store: storeUrl(kind), logger: silentLogger, ...options });
  onCleanup(() => engine.close());
  return engine;
}

/** A promise with its resolve/reject exposed. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Engines that share one store, like processes sharing a database: SQLite opens the
 * same file twice, PostgreSQL the same schema; the memory store is shared as an object.
 */
export async function sharedEngines(kind: StoreKind, ...workflowSets: EngineOptions["workflows"][]): Promise<Engine[]> {
  const url = storeUrl(kind);
  const engines: Engine[] = [];
  for (const workflows of workflowSets) {
    const store = kind === "memory" && engines[0] ? engines[0].store : url;
    const engine = await createEngine({ store, workflows, logger: silentLogger });
    engines.push(engine);
  }
  onCleanup(async () => {
    for (const engine of engines.reverse()) await engine.close().catch(() => undefined);
  });
  return engines;
}
