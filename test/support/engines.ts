import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { createEngine } from "../../src/engine/create-engine.js";
import type { Engine, EngineOptions } from "../../src/engine/engine.js";
import { silentLogger } from "../../src/engine/logger.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fresh temp directory, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "cairn-test-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The store kinds engine tests run against. */
export const STORE_KINDS = ["memory", "sqlite"] as const;
export type StoreKind = (typeof STORE_KINDS)[number];

/** A store URL of the given kind, isolated to this test. */
export function storeUrl(kind: StoreKind): string {
  return kind === "memory" ? "memory:" : `sqlite:${join(tempDir(), "cairn.db")}`;
}

/** An engine on a fresh store, closed after the test. */
export async function testEngine(kind: StoreKind, options: EngineOptions = {}): Promise<Engine> {
  const engine = await createEngine({ store: storeUrl(kind), logger: silentLogger, ...options });
  cleanups.push(() => engine.close());
  return engine;
}

/** Registers a cleanup to run after the test. */
export function onCleanup(cleanup: () => Promise<void> | void): void {
  cleanups.push(cleanup);
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
 * same file twice; the memory store is shared as an object.
 */
export async function sharedEngines(kind: StoreKind, ...workflowSets: EngineOptions["workflows"][]): Promise<Engine[]> {
  const url = storeUrl(kind);
  const engines: Engine[] = [];
  for (const workflows of workflowSets) {
    const store = kind === "memory" && engines[0] ? engines[0].store : url;
    const engine = await createEngine({ store, workflows, logger: silentLogger });
    engines.push(engine);
  }
  cleanups.push(async () => {
    for (const engine of engines.reverse()) await engine.close().catch(() => undefined);
  });
  return engines;
}
