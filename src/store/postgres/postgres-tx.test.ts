import pg from "pg";
import { describe, expect, it } from "vitest";
import { RunNotFoundError } from "../../core/errors.js";
import { MANY_RUNS, PgRunner, isConnectionLoss, journalPayload, parseJournalPayload } from "./postgres-tx.js";

// PgRunner against a scripted pool: what is retried, what is rolled back, which connections are
// thrown away. (The PostgreSQL suite covers the same paths against a real server, where the
// timing of a dead connection cannot be forced.)

function dbError(code: string, message = `error ${code}`): pg.DatabaseError {
  const error = new pg.DatabaseError(message, 0, "error");
  error.code = code;
  return error;
}

/** A pooled connection that answers statements from a script; a thrown Error rejects. */
class FakeClient {
  readonly sent: string[] = [];
  released: { error: unknown } | undefined;
  private readonly listeners = new Set<unknown>();
  constructor(private readonly replies: (text: string) => unknown) {}
  async query(config: string | { text: string }): Promise<unknown> {
    const text = typeof config === "string" ? config : config.text;
    this.sent.push(text);
    const reply = this.replies(text);
    if (reply instanceof Error) throw reply;
    return reply ?? { rows: [] };
  }
  on(_event: string, listener: unknown): void {
    this.listeners.add(listener);
  }
  off(_event: string, listener: unknown): void {
    this.listeners.delete(listener);
  }
  release(error?: unknown): void {
    this.released = { error };
  }
  get listening(): number {
    return this.listeners.size;
  }
}

function fakePool(...clients: FakeClient[]): { pool: pg.Pool; handedOut: FakeClient[] } {
  const handedOut: FakeClient[] = [];
  const pool = {
    async connect() {
      const client = clients.shift();
      if (!client) throw new Error("no more connections");
      handedOut.push(client);
      return client;
    },
    async query(config: { text: string }) {
      const client = await pool.connect();
      try {
        return await client.query(config);
      } finally {
        client.release();
      }
    },
  };
  return { pool: pool as unknown as pg.Pool, handedOut };
}

const ok = (): FakeClient => new FakeClient(() => ({ rows: [] }));
const deadOnArrival = (): FakeClient => new FakeClient(() => dbError("57P01", "terminating connection due to administrator command"));

describe("PgRunner transactions", () => {
  it("runs BEGIN, the statements and COMMIT on one connection, and returns it to the pool", async () => {
    const client = ok();
    const runner = new PgRunner(fakePool(client).pool, "caller", '"cairn_wake_x"');
    const result = await runner.transaction(123, async (tx) => {
      expect(tx.now).toBe(123);
      await tx.query("SELECT 1");
      return "done";
    });
    expect(result).toBe("done");
    expect(client.sent).toEqual(["BEGIN", "SELECT 1", "COMMIT"]);
    expect(client.released).toEqual({ error: undefined });
    expect(client.listening).toBe(0);
  });

  it("reads the database clock with BEGIN in database mode, and NOTIFYs with COMMIT when asked", async () => {
    const client = new FakeClient((text) => (text.startsWith("BEGIN;") ? [{ rows: [] }, { rows: [{ now: 777 }] }] : { rows: [] }));
    const runner = new PgRunner(fakePool(client).pool, "database", '"cairn_wake_x"');
    await runner.transaction(1, async (tx) => {
      expect(tx.now).toBe(777);
      tx.wake();
    });
    expect(client.sent[0]).toMatch(/^BEGIN; SELECT .*clock_timestamp\(\).* AS now$/);
    expect(client.sent.at(-1)).toBe('NOTIFY "cairn_wake_x"; COMMIT');
    expect(runner.nowParam(5)).toBeNull();
    expect(new PgRunner(fakePool().pool, "caller", "c").nowParam(5)).toBe(5);
  });

  it("sends one journal notice with COMMIT naming only the transaction's listened runs, and none when no run of it is listened to", async () => {
    let listened = new Set(["a", "it's"]);
    const asked: string[][] = [];
    const clients = [ok(), ok(), ok(), ok()];
    const runner = new PgRunner(fakePool(...clients).pool, "caller", '"cairn_wake_x"', {
      channel: '"cairn_journal_x"',
      listened: (runIds) => {
        asked.push([...runIds]);
        return [...runIds].filter((runId) => listened.has(runId));
      },
    });
    await runner.transaction(1, async (tx) => {
      tx.journaled(["a", "it's", "quiet"]);
      tx.journaled(["a"]);
      tx.wake();
    });
    expect(clients[0]!.sent.at(-1)).toBe(`NOTIFY "cairn_wake_x"; NOTIFY "cairn_journal_x", '["a","it''s"]'; COMMIT`);
    expect(asked).toEqual([["a", "it's", "quiet"]]);
    // A run no one listens to, while others are listened to: no NOTIFY at all.
    await runner.transaction(1, async (tx) => tx.journaled(["quiet"]));
    expect(clients[1]!.sent.at(-1)).toBe("COMMIT");
    listened = new Set();
    await runner.transaction(1, async (tx) => tx.journaled(["a"]));
    expect(clients[2]!.sent.at(-1)).toBe("COMMIT");
    // A transaction that appended nothing does not even ask.
    await expect(runner.transaction(1, async (tx) => tx.journaled([]))).resolves.toBeUndefined();
    expect(clients[3]!.sent.at(-1)).toBe("COMMIT");
    expect(asked).toHaveLength(3);
  });

  it("names runs in a journal payload up to 7999 bytes, and any run beyond", () => {
    const fits = Array.from({ length: 100 }, (_, i) => `run-${String(i).padStart(70, "0")}`);
    expect(Buffer.byteLength(journalPayload(fits))).toBeLessThanOrEqual(7999);
    expect(parseJournalPayload(journalPayload(fits))).toEqual(fits);
    expect(journalPayload([...fits, "x".repeat(400)])).toBe(MANY_RUNS);
    expect(journalPayload(["é".repeat(3000), "ü".repeat(1000)])).toBe(MANY_RUNS); // 8000+ bytes, fewer characters
    expect(parseJournalPayload(MANY_RUNS)).toBeUndefined();
    expect(parseJournalPayload(undefined)).toBeUndefined();
    expect(parseJournalPayload("not json")).toBeUndefined();
    expect(parseJournalPayload('{"a":1}')).toBeUndefined();
  });

  it("throws away a pooled connection found dead at BEGIN and runs again on another", async () => {
    const dead = deadOnArrival();
    const fresh = ok();
    const runner = new PgRunner(fakePool(dead, fresh).pool, "caller", "c");
    let calls = 0;
    await runner.transaction(1, async (tx) => {
      calls++;
      await tx.query("INSERT");
    });
    expect(calls).toBe(1);
    expect(dead.released?.error).toMatchObject({ code: "57P01" });
    expect(fresh.sent).toEqual(["BEGIN", "INSERT", "COMMIT"]);
  });

  it("does not run again when the connection is lost after BEGIN: the outcome is the caller's to judge", async () => {
    const lost = new Error("Connection terminated unexpectedly");
    const client = new FakeClient((text) => (text === "INSERT" ? lost : { rows: [] }));
    const runner = new PgRunner(fakePool(client, ok()).pool, "caller", "c");
    await expect(runner.transaction(1, (tx) => tx.query("INSERT"))).rejects.toBe(lost);
    expect(client.sent).toEqual(["BEGIN", "INSERT"]);
    expect(client.released?.error).toBe(lost);
  });

  it("rolls back and runs again after a deadlock", async () => {
    let deadlocked = false;
    const first = new FakeClient((text) => {
      if (text !== "UPDATE" || deadlocked) return { rows: [] };
      deadlocked = true;
      return dbError("40P01", "deadlock detected");
    });
    const second = ok();
    const runner = new PgRunner(fakePool(first, second).pool, "caller", "c");
    let calls = 0;
    await runner.transaction(1, async (tx) => {
      calls++;
      await tx.query("UPDATE");
    });
    expect(calls).toBe(2);
    expect(first.sent).toEqual(["BEGIN", "UPDATE", "ROLLBACK"]);
    expect(first.released).toEqual({ error: undefined });
    expect(second.sent).toEqual(["BEGIN", "UPDATE", "COMMIT"]);
  });

  it("rolls back, keeps the connection and does not retry when the operation itself throws", async () => {
    const client = ok();
    const runner = new PgRunner(fakePool(client, ok()).pool, "caller", "c");
    await expect(
      runner.transaction(1, async (tx) => {
        await tx.query("SELECT");
        throw new RunNotFoundError("r1");
      }),
    ).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
    expect(client.sent).toEqual(["BEGIN", "SELECT", "ROLLBACK"]);
    expect(client.released).toEqual({ error: undefined });
  });

  it("gives up after five conflicts in a row", async () => {
    const clients = Array.from({ length: 5 }, () => new FakeClient((text) => (text === "UPDATE" ? dbError("40001") : { rows: [] })));
    const runner = new PgRunner(fakePool(...clients).pool, "caller", "c");
    await expect(runner.transaction(1, (tx) => tx.query("UPDATE"))).rejects.toMatchObject({ code: "40001" });
    expect(clients.every((client) => client.sent.includes("ROLLBACK"))).toBe(true);
  });
});

describe("PgRunner single statements", () => {
  it("runs a statement again on another connection when its connection was dead", async () => {
    const fresh = new FakeClient(() => ({ rows: [{ x: 1 }] }));
    const runner = new PgRunner(fakePool(deadOnArrival(), fresh).pool, "caller", "c");
    expect(await runner.query("SELECT x")).toEqual([{ x: 1 }]);
  });

  it("does not retry a server that cannot be reached, or a statement the server refused", async () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    const unreachable = { connect: async () => Promise.reject(refused), query: async () => Promise.reject(refused) } as unknown as pg.Pool;
    await expect(new PgRunner(unreachable, "caller", "c").query("SELECT")).rejects.toBe(refused);
    const syntax = dbError("42601", "syntax error");
    const client = new FakeClient(() => syntax);
    await expect(new PgRunner(fakePool(client, ok()).pool, "caller", "c").query("SELEC")).rejects.toBe(syntax);
  });
});

describe("isConnectionLoss", () => {
  it("recognises a lost connection, and nothing else", () => {
    expect(isConnectionLoss(dbError("57P01"))).toBe(true);
    expect(isConnectionLoss(dbError("08006"))).toBe(true);
    expect(isConnectionLoss(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isConnectionLoss(new Error("Client has encountered a connection error and is not queryable"))).toBe(true);
    expect(isConnectionLoss(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }))).toBe(true);
    expect(isConnectionLoss(new Error("Connection terminated due to connection timeout"))).toBe(false);
    expect(isConnectionLoss(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }))).toBe(false);
    expect(isConnectionLoss(dbError("23505"))).toBe(false);
    expect(isConnectionLoss(new RunNotFoundError("r"))).toBe(false);
  });
});
