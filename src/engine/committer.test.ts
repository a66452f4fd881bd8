import { describe, expect, it } from "vitest";
import { commitNotApplied } from "./committer.js";

/** An error as node-postgres, better-sqlite3 or node's sockets raise it. */
function failure(code: string | undefined, message: string): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

describe("which failed commits run again", () => {
  it.each([
    ["SQLITE_BUSY", "database is locked"],
    ["SQLITE_LOCKED", "database table is locked"],
    ["ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432"],
    ["57P03", "the database system is starting up"],
    ["40001", "could not serialize access due to concurrent update"],
    ["40P01", "deadlock detected"],
    [undefined, "timeout exceeded when trying to connect"],
  ])("%s (%s): nothing was written, so it runs again", (code, message) => {
    expect(commitNotApplied(failure(code, message))).toBe(true);
  });

  // The server may have committed before the reply was lost: running the commit again would
  // append the same entries a second time under the same lease epoch.
  it.each([
    ["57P01", "terminating connection due to administrator command"],
    ["57P02", "terminating connection due to crash of another server process"],
    ["08006", "connection failure"],
    ["ECONNRESET", "read ECONNRESET"],
    ["EPIPE", "write EPIPE"],
    ["ETIMEDOUT", "read ETIMEDOUT"],
    [undefined, "Connection terminated unexpectedly"],
    [undefined, "Client has encountered a connection error and is not queryable"],
    ["23505", "duplicate key value violates unique constraint"],
  ])("%s (%s): the outcome is unknown or final, so it is not run again", (code, message) => {
    expect(commitNotApplied(failure(code, message))).toBe(false);
  });
});
