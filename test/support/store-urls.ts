import { join } from "node:path";
import { tempDir } from "./engines.js";
import { freshPgUrl, pgReachable } from "./pg-schema.js";

/** The durable stores engine-level feature tests run on: real SQLite files and real PostgreSQL schemas. */
export const DURABLE_STORES = ["sqlite", "postgres"] as const;
export type DurableStore = (typeof DURABLE_STORES)[number];

/** True when the test PostgreSQL answers; under CI=true an unreachable server throws (PG tests must run there). */
export const postgresReachable = pgReachable;

/**
 * A store URL isolated to this test: a fresh SQLite file, or a fresh PostgreSQL schema dropped
 * after the test (weak durability allowed, since test servers often run with fsync off).
 */
export function durableStoreUrl(kind: DurableStore): string {
  if (kind === "sqlite") return `sqlite:${join(tempDir(), "cairn.db")}`;
  const url = new URL(freshPgUrl());
  url.searchParams.set("allowWeakDurability", "1");
  return url.toString();
}
