import { closeSync, existsSync, mkdirSync, openSync, readSync, statSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { SchemaTooNewError, StoreInvalidError } from "../../core/errors.js";
import { CAIRN_APPLICATION_ID, latestSchemaVersion, schemaVersion } from "./sqlite-migrations.js";

/** How a {@link SqliteStore} opens its file. */
export interface SqliteStoreOptions {
  /**
   * `FULL` (default) makes every commit durable across power loss; `NORMAL` may lose
   * the last commits on power loss (never on a process crash) and is faster.
   */
  synchronous?: "FULL" | "NORMAL";
  /** How long a write waits for another process's write lock, in ms. Default 10000. */
  busyTimeoutMs?: number;
  /** Run `PRAGMA quick_check` when opening an existing file. Default true. */
  verify?: boolean;
}

const SQLITE_MAGIC = Buffer.from("SQLite format 3\0", "latin1");
const HEADER_SIZE = 100;

/**
 * Opens (creating if needed) a Cairn SQLite file, after checking, without changing a
 * byte, that an existing file is a healthy Cairn store of a schema this build knows.
 * Then sets WAL, `synchronous`, `busy_timeout` and foreign keys.
 * @throws StoreInvalidError for a file that is not SQLite, belongs to another application, or is damaged.
 * @throws SchemaTooNewError for a store written by a newer Cairn.
 */
export function openSqliteDatabase(path: string, options: SqliteStoreOptions = {}): Database.Database {
  const busyTimeoutMs = options.busyTimeoutMs ?? 10_000;
  if (path !== ":memory:") {
    if (existsSync(path)) inspectExistingFile(path, options.verify ?? true, busyTimeoutMs);
    else mkdirSync(dirname(path), { recursive: true });
  }
  const db = new Database(path, { timeout: busyTimeoutMs });
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    if (path !== ":memory:") enableWal(db, busyTimeoutMs);
    db.pragma(`synchronous = ${options.synchronous ?? "FULL"}`);
    db.pragma("foreign_keys = ON");
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * Switching a fresh file to WAL needs an exclusive lock, and SQLite answers SQLITE_BUSY at once
 * (without its busy handler) while another process opens the same file. Retry with a short
 * back-off until the busy timeout, as every other statement waits.
 */
function enableWal(db: Database.Database, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  for (let delayMs = 1; ; delayMs = Math.min(delayMs * 2, 50)) {
    try {
      db.pragma("journal_mode = WAL");
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== "SQLITE_BUSY" || Date.now() >= deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, delayMs);
    }
  }
}

function inspectExistingFile(path: string, verify: boolean, busyTimeoutMs: number): void {
  const stat = statSync(path);
  if (!stat.isFile()) throw new StoreInvalidError(`Cannot open the Cairn store at ${path}: it is not a regular file. Point the store URL at a file path.`);
  if (stat.size === 0) return;
  const header = readHeader(path);
  if (header.length < SQLITE_MAGIC.length || !header.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)) {
    throw new StoreInvalidError(
      `${path} is not a SQLite database, so it is not a Cairn store. It was not modified. Point the store URL at a Cairn database or at a new file.`,
    );
  }
  if (header.length < HEADER_SIZE) throw damaged(path, `the file is only ${stat.size} bytes, shorter than a SQLite header`);
  if (!existsSync(`${path}-wal`)) {
    // Without a -wal file the header is current, so another application's file can often be
    // refused from it alone. That matters for WAL-mode files: opening one, even read-only,
    // creates -wal and -shm files beside it, which must not be left next to someone else's data.
    const applicationId = header.readUInt32BE(68);
    if (applicationId !== 0 && applicationId !== CAIRN_APPLICATION_ID) throw foreign(path, `its application_id is 0x${applicationId.toString(16)}`);
    if (applicationId === 0 && header[18] === 2) {
      const pageSize = header.readUInt16BE(16) === 1 ? 65_536 : header.readUInt16BE(16);
      if (stat.size <= pageSize) return;
      throw foreign(path, "it holds data but is not marked as a Cairn store");
    }
  }
  inspectWithSqlite(path, verify, busyTimeoutMs);
}

function inspectWithSqlite(path: string, verify: boolean, busyTimeoutMs: number): void {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
    const applicationId = Number(db.pragma("application_id", { simple: true }));
    if (applicationId !== 0 && applicationId !== CAIRN_APPLICATION_ID) throw foreign(path, `its application_id is 0x${applicationId.toString(16)}`);
    if (applicationId === 0) {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[];
      if (tables.length > 0) throw foreign(path, `it has tables (${tables.slice(0, 5).join(", ")}${tables.length > 5 ? ", …" : ""}) and no Cairn marker`);
    }
    if (verify) {
      const problems = db.pragma("quick_check(5)", { simple: false }) as { quick_check: string }[];
      const messages = problems.map((row) => row.quick_check).filter((message) => message !== "ok");
      if (messages.length > 0) throw damaged(path, `integrity check failed: ${messages.join("; ")}`);
    }
    const found = schemaVersion(db);
    const known = latestSchemaVersion();
    if (found > known) throw new SchemaTooNewError(found, known);
  } catch (error) {
    if (error instanceof StoreInvalidError || error instanceof SchemaTooNewError) throw error;
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB")) {
      throw damaged(path, (error as Error).message, error);
    }
    throw error;
  } finally {
    db?.close();
  }
}

function readHeader(path: string): Buffer {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.alloc(HEADER_SIZE);
    const read = readSync(fd, buffer, 0, HEADER_SIZE, 0);
    return buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

function foreign(path: string, why: string): StoreInvalidError {
  return new StoreInvalidError(
    `${path} is a SQLite database of another application, not a Cairn store (${why}). It was not modified. Point the store URL at a Cairn database or at a new file.`,
  );
}

function damaged(path: string, why: string, cause?: unknown): StoreInvalidError {
  return new StoreInvalidError(
    `${path} is a damaged SQLite database (${why}), so it cannot be used as a Cairn store. It was not modified. Restore it from a backup, or move it aside to start a new store.`,
    cause === undefined ? undefined : { cause },
  );
}
