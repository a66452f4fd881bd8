import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import { promisify } from "node:util";
import pg from "pg";
import { waitFor } from "../../../src/testing/wait-for.js";
import { onCleanup } from "../../support/engines.js";

/** The test server (CAIRN_TEST_PG_URL; see the README). */
export const PG_URL = process.env.CAIRN_TEST_PG_URL || "postgres://postgres@127.0.0.1:5432/test";

/** A fresh PostgreSQL schema for one test, dropped after it, with an admin connection beside it. */
export interface ChaosSchema {
  readonly name: string;
  /**
   * A store URL for this schema whose connections carry `application_name` (pg takes it from the
   * URL over the store's default), so faults can target exactly these sessions.
   */
  url(applicationName: string, extra?: Record<string, string>): string;
  /** Runs SQL on the admin connection (its own application_name, never faulted). */
  query<R extends pg.QueryResultRow = any>(sql: string, params?: unknown[]): Promise<R[]>;
  /** Terminates every session of this database with exactly this application_name; returns how many. */
  terminate(applicationName: string): Promise<number>;
  /**
   * The sessions with this application_name that are in a transaction or waiting, oldest
   * transaction first (pid, state, transaction age, what it waits for, its last statement): for a
   * failure message, since a transaction left open holds its row locks and claims skip those runs.
   */
  sessions(applicationName: string): Promise<string[]>;
}

/** Creates the test's schema name (`cairn_chaos_<random>`) and registers its cleanup. */
export async function chaosSchema(): Promise<ChaosSchema> {
  const name = `cairn_chaos_${randomBytes(5).toString("hex")}`;
  const admin = new pg.Pool({ connectionString: PG_URL, application_name: `${name}_admin`, max: 2 });
  admin.on("error", () => undefined); // idle connections dropped by a server restart
  const query = async (sql: string, params?: unknown[]) => (await admin.query(sql, params)).rows;
  await query("SELECT 1");
  onCleanup(async () => {
    await waitFor(() => query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`).then(() => true), { timeoutMs: 30_000, what: `drop schema ${name}` });
    await admin.end();
  });
  return {
    name,
    url(applicationName, extra = {}) {
      const url = new URL(PG_URL);
      url.searchParams.set("schema", name);
      url.searchParams.set("application_name", applicationName);
      for (const [key, value] of Object.entries(extra)) url.searchParams.set(key, value);
      return url.toString();
    },
    query,
    async terminate(applicationName) {
      const rows = await query(
        `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = $1`,
        [applicationName],
      );
      return rows.filter((r) => r.ok).length;
    },
    async sessions(applicationName) {
      const rows: { pid: number; state: string; xact_ms: number | null; wait: string | null; query: string }[] = await query(
        `SELECT pid, state, (extract(epoch FROM now() - xact_start) * 1000)::int AS xact_ms,
                wait_event_type || ':' || wait_event AS wait, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query
           FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = $1 AND (xact_start IS NOT NULL OR wait_event_type = 'Lock')
          ORDER BY xact_start NULLS LAST`,
        [applicationName],
      );
      return rows.map((r) => `pid ${r.pid} ${r.state} xact ${r.xact_ms ?? "-"}ms wait ${r.wait ?? "-"}: ${r.query}`);
    },
  };
}

/**
 * Restarts the PostgreSQL server in immediate mode (a crash: no checkpoint, every session cut) and
 * waits until it answers again. Soak tier only: it cuts every other test's sessions too.
 * `CAIRN_CHAOS_PG_RESTART` overrides the command (a shell command line), e.g. for a private server:
 * `su postgres -c "pg_ctl -D /tmp/pg/data restart -m immediate"`.
 */
export async function restartPostgres(schema: ChaosSchema): Promise<void> {
  const custom = process.env.CAIRN_CHAOS_PG_RESTART;
  if (custom) await promisify(execFile)("sh", ["-c", custom]);
  else {
    const version = readdirSync("/etc/postgresql")[0]!;
    await promisify(execFile)("pg_ctlcluster", ["--skip-systemctl-redirect", version, "main", "restart", "-m", "immediate"]);
  }
  await waitFor(() => schema.query("SELECT 1").then(() => true), { timeoutMs: 60_000, intervalMs: 100, what: "PostgreSQL back after restart" });
}
