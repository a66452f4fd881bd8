import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync, openSync, writeSync, closeSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { encode } from "../../core/serialize.js";
import { CAIRN_APPLICATION_ID, latestSchemaVersion, sqliteMigrations } from "./sqlite-migrations.js";
import { SqliteStore } from "./sqlite-store.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cairn-open-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

async function openMigrated(path: string, options: ConstructorParameters<typeof SqliteStore>[1] = {}): Promise<SqliteStore> {
  const store = new SqliteStore(path, options);
  await store.migrate();
  return store;
}

/** A closed Cairn store with enough rows to span many pages. */
async function makeCairnFile(path: string, runs = 300): Promise<void> {
  const store = await openMigrated(path);
  for (let i = 0; i < runs; i++) await store.createRun({ runId: `run-${i}`, workflow: "wf", version: "1", input: encode("x".repeat(400)) }, 1000 + i);
  await store.close();
}

/**
 * Expects opening to fail with STORE_INVALID, leaving the file's bytes as they were and, for
 * files that are not Cairn's, creating nothing beside it. (Checking a Cairn-marked WAL file
 * opens it read-only, which may create its -wal and -shm files: they belong to Cairn anyway.)
 */
function expectRefused(path: string, message: RegExp, ownFile = false): void {
  const before = sha256(path);
  const siblings = existsSync(`${path}-wal`) || existsSync(`${path}-shm`);
  let error: unknown;
  try {
    void new SqliteStore(path).close();
  } catch (caught) {
    error = caught;
  }
  expect(error).toMatchObject({ code: "STORE_INVALID", name: "StoreInvalidError" });
  const text = (error as Error).message;
  expect(text).toContain(path);
  expect(text).toContain("It was not modified");
  expect(text).toMatch(message);
  expect(sha256(path)).toBe(before);
  if (!siblings && !ownFile) {
    expect(existsSync(`${path}-wal`)).toBe(false);
    expect(existsSync(`${path}-shm`)).toBe(false);
  }
}

describe("opening a file that is not a healthy Cairn store", () => {
  it("refuses a text file", () => {
    const path = join(dir, "notes.db");
    writeFileSync(path, "These are my notes, not a database.\n");
    expectRefused(path, /is not a SQLite database, so it is not a Cairn store/);
  });

  it("refuses a file of random bytes", () => {
    const path = join(dir, "noise.db");
    const bytes = randomBytes(8192);
    bytes.write("NOISE", 0);
    writeFileSync(path, bytes);
    expectRefused(path, /not a SQLite database/);
  });

  it("refuses a file shorter than the SQLite magic", () => {
    const path = join(dir, "tiny.db");
    writeFileSync(path, "SQLit");
    expectRefused(path, /not a SQLite database/);
  });

  it("refuses another application's SQLite database", () => {
    const path = join(dir, "foreign.db");
    const other = new Database(path);
    other.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('Ada');");
    other.close();
    expectRefused(path, /SQLite database of another application, not a Cairn store.*customers/);
  });

  it("refuses another application's WAL-mode database without leaving -wal or -shm files", () => {
    const path = join(dir, "foreign-wal.db");
    const other = new Database(path);
    other.pragma("journal_mode = WAL");
    other.exec("CREATE TABLE t (x); INSERT INTO t VALUES (1);");
    other.close();
    expect(existsSync(`${path}-wal`)).toBe(false);
    expectRefused(path, /another application/);
  });

  it("refuses a database marked with another application_id", () => {
    const path = join(dir, "marked.db");
    const other = new Database(path);
    other.pragma("application_id = 305419896");
    other.close();
    expectRefused(path, /another application.*0x12345678/);
  });

  it("refuses a truncated Cairn store", async () => {
    const path = join(dir, "truncated.db");
    await makeCairnFile(path);
    truncateSync(path, Math.floor(statSync(path).size / 2));
    expectRefused(path, /damaged SQLite database/, true);
  });

  it("refuses a Cairn store with overwritten pages", async () => {
    const path = join(dir, "scribbled.db");
    await makeCairnFile(path);
    const fd = openSync(path, "r+");
    writeSync(fd, Buffer.alloc(4096, 0xab), 0, 4096, 4096 * 4);
    closeSync(fd);
    expectRefused(path, /damaged/, true);
  });

  it("refuses a file cut inside its SQLite header", async () => {
    const path = join(dir, "header.db");
    await makeCairnFile(path, 1);
    truncateSync(path, 60);
    expectRefused(path, /damaged.*shorter than a SQLite header/, true);
  });

  it("refuses a directory", () => {
    const path = join(dir, "a-directory");
    mkdirSync(path);
    expect(() => new SqliteStore(path)).toThrow(expect.objectContaining({ code: "STORE_INVALID" }) as Error);
  });

  it("refuses a store written by a newer Cairn, without modifying it", async () => {
    const path = join(dir, "future.db");
    await makeCairnFile(path, 1);
    const raw = new Database(path);
    raw.prepare("INSERT INTO cairn_migrations (version, name, applied_at) VALUES (999, '0999_future.sql', 0)").run();
    raw.close();
    const before = sha256(path);
    expect(() => new SqliteStore(path)).toThrow(
      expect.objectContaining({ code: "SCHEMA_TOO_NEW", message: expect.stringMatching(/schema version 999/) as string }) as Error,
    );
    expect(sha256(path)).toBe(before);
  });
});

describe("opening a Cairn store", () => {
  it("creates the file and its parent directories, in WAL mode with synchronous=FULL", async () => {
    const path = join(dir, "nested", "deeper", "cairn.db");
    const store = await openMigrated(path);
    expect(existsSync(path)).toBe(true);
    expect(store.url).toBe(`sqlite:${path}`);
    expect(store.settings()).toEqual({
      journalMode: "wal",
      synchronous: "FULL",
      busyTimeoutMs: 10_000,
      foreignKeys: true,
      applicationId: CAIRN_APPLICATION_ID,
      schemaVersion: latestSchemaVersion(),
    });
    await store.close();
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(raw.pragma("application_id", { simple: true })).toBe(0x4341524e);
    expect(raw.prepare("SELECT version, name FROM cairn_migrations").all()).toEqual(sqliteMigrations().map(({ version, name }) => ({ version, name })));
    raw.close();
  });

  it("honours synchronous=NORMAL and a custom busy timeout", async () => {
    const store = await openMigrated(join(dir, "c.db"), { synchronous: "NORMAL", busyTimeoutMs: 250 });
    expect(store.settings()).toMatchObject({ synchronous: "NORMAL", busyTimeoutMs: 250 });
    await store.close();
  });

  it("reopens an existing store with its data, and migrating again changes nothing", async () => {
    const path = join(dir, "c.db");
    await makeCairnFile(path, 3);
    const store = await openMigrated(path);
    await store.migrate();
    expect((await store.listRuns({})).runs.map((run) => run.runId)).toEqual(["run-2", "run-1", "run-0"]);
    expect(store.settings().schemaVersion).toBe(latestSchemaVersion());
    await store.close();
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare("SELECT COUNT(*) AS n FROM cairn_migrations").get()).toEqual({ n: latestSchemaVersion() });
    raw.close();
  });

  it("upgrades a version-1 store in place, keeping its data", async () => {
    const path = join(dir, "v1.db");
    await makeCairnFile(path, 3);
    const raw = new Database(path);
    raw.exec(
      "DROP TABLE drained_versions; DROP TABLE outbox; DROP TABLE schedules; ALTER TABLE human_requests DROP COLUMN context; DROP TABLE audit_log; DROP TABLE tokens; DROP TABLE journal_text; DROP INDEX journal_checkpoint_idx; DROP INDEX journal_claims_idx; DROP INDEX runs_stuck_idx; DROP TABLE workers; DROP TABLE blobs; DROP TABLE step_flow_slots; DROP TABLE step_flow_hits; DROP TABLE step_flow_waiters; DROP TABLE run_tags; DROP TABLE run_values; DROP TABLE run_deadlines; DROP TABLE live_deltas; DROP TABLE live_listeners; DROP TABLE agent_messages; DROP TABLE tool_calls; DROP TABLE journal_compactions; DELETE FROM cairn_migrations WHERE version > 1",
    );
    raw.close();
    const store = await openMigrated(path);
    expect(store.settings().schemaVersion).toBe(latestSchemaVersion());
    expect((await store.listRuns({})).runs).toHaveLength(3);
    await store.upsertWorker({ workerId: "w", host: "h", pid: 1, workflows: [], runsHeld: 0, startedAt: 1, heartbeatAt: 2 });
    expect(await store.listWorkers(0)).toHaveLength(1);
    expect(await store.listAudit({})).toEqual([]);
    await store.close();
  });

  it("reopens a store that another connection holds open", async () => {
    const path = join(dir, "c.db");
    const first = await openMigrated(path);
    await first.createRun({ runId: "r1", workflow: "wf", version: "1", input: "1" }, 1);
    const second = await openMigrated(path);
    expect(await second.getRun("r1")).toBeDefined();
    await second.close();
    await first.close();
  });

  it("turns an empty file into a store", async () => {
    const path = join(dir, "empty.db");
    writeFileSync(path, "");
    const store = await openMigrated(path);
    expect(store.settings().applicationId).toBe(CAIRN_APPLICATION_ID);
    await store.close();
  });

  it("adopts an empty SQLite database", async () => {
    const path = join(dir, "blank.db");
    const raw = new Database(path);
    raw.pragma("journal_mode = WAL");
    raw.pragma("user_version = 0");
    raw.close();
    const store = await openMigrated(path);
    expect(store.settings().schemaVersion).toBe(latestSchemaVersion());
    await store.close();
  });

  it("explains that migrate() is needed before use", async () => {
    const store = new SqliteStore(join(dir, "fresh.db"));
    await expect(store.getRun("x")).rejects.toThrow(/call migrate\(\)/);
    await store.close();
  });

  it("works in memory", async () => {
    const store = await openMigrated(":memory:");
    expect(store.url).toBe("sqlite::memory:");
    await store.createRun({ runId: "r1", workflow: "wf", version: "1", input: "1" }, 1);
    expect(await store.getRun("r1")).toBeDefined();
    await store.close();
    await store.close();
  });
});

describe("several connections on one file", () => {
  it("never double-claims and fences stale writers across store instances", async () => {
    const path = join(dir, "shared.db");
    const stores = await Promise.all([openMigrated(path), openMigrated(path), openMigrated(path)]);
    const [a, b] = stores as [SqliteStore, SqliteStore, SqliteStore];
    for (let i = 0; i < 30; i++) await a.createRun({ runId: `r${i}`, workflow: "wf", version: "1", input: "1" }, 1000 + i);
    const claims = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (stores[i % 3] as SqliteStore).claimRuns({ workerId: `w${i}`, now: 5000, leaseMs: 1000, limit: 3, workflows: [{ name: "wf", version: "1" }] }),
      ),
    );
    const ids = claims.flat().map((run) => run.runId);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
    const [taken] = await b.claimRuns({ workerId: "late", now: 6000, leaseMs: 1000, limit: 1, workflows: [{ name: "wf", version: "1" }] });
    expect(taken?.leaseEpoch).toBe(2);
    const fresh = { runId: taken?.runId ?? "", epoch: 1, entries: [] };
    expect(await a.commit([fresh], 6001)).toEqual([{ ok: false, reason: "lease-lost" }]);
    await Promise.all(stores.map((store) => store.close()));
  });
});

describe("upgrading a version-5 file", () => {
  it("rebuilds the runs table for the new statuses, keeping rows, journal and foreign keys", async () => {
    const path = join(dir, "v5.db");
    const db = new Database(path);
    db.pragma("foreign_keys = ON");
    db.exec("CREATE TABLE cairn_migrations (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
    for (const migration of sqliteMigrations().slice(0, 5)) {
      db.exec(migration.sql);
      db.prepare("INSERT INTO cairn_migrations VALUES (?, ?, 0)").run(migration.version, migration.name);
    }
    db.pragma(`application_id = ${CAIRN_APPLICATION_ID}`);
    db.prepare(
      "INSERT INTO runs (run_id, workflow, version, status, input, last_seq, created_at, updated_at) VALUES ('old', 'wf', '1', 'suspended', ?, 1, 1, 1)",
    ).run(encode({ n: 1 }));
    db.prepare("INSERT INTO journal (run_id, seq, kind, op_key, payload, epoch, at) VALUES ('old', 1, 'run.created', NULL, '{}', 0, 1)").run();
    expect(() => db.prepare("UPDATE runs SET status = 'compensated'").run()).toThrow(/CHECK/);
    db.close();

    const store = await openMigrated(path);
    expect(await store.getRun("old")).toMatchObject({ status: "suspended", lastSeq: 1 });
    expect((await store.readJournal("old")).map((entry) => entry.kind)).toEqual(["run.created"]);
    await store.close();

    const after = new Database(path);
    after.pragma("foreign_keys = ON");
    after.prepare("UPDATE runs SET status = 'compensated'").run();
    expect(() => after.prepare("UPDATE runs SET status = 'bogus'").run()).toThrow(/CHECK/);
    expect(() =>
      after.prepare("INSERT INTO journal (run_id, seq, kind, op_key, payload, epoch, at) VALUES ('nobody', 1, 'x', NULL, '{}', 0, 1)").run(),
    ).toThrow(/FOREIGN KEY/);
    expect(after.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'runs' ORDER BY name").pluck().all()).toEqual([
      "runs_created_idx",
      "runs_debounce_idx",
      "runs_finished_idx",
      "runs_lease_idx",
      "runs_parent_idx",
      "runs_pending_idx",
      "runs_queue_due_idx",
      "runs_queue_pending_idx",
      "runs_queue_running_idx",
      "runs_queue_started_idx",
      "runs_stuck_idx",
      "runs_wake_idx",
      "sqlite_autoindex_runs_1",
    ]);
    after.close();
  });
});
