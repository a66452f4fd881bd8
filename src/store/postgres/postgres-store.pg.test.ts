import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { newEntry } from "../../core/journal.js";
import type { RunRecord } from "../../core/run.js";
import { encode } from "../../core/serialize.js";
import type { ClaimRequest, Store } from "../../core/store.js";
import { freshPgUrl } from "../../../test/support/pg-schema.js";
import { storeConformance } from "../conformance/store-conformance.js";
import { openStore } from "../open-store.js";
import { latestPostgresVersion, postgresMigrations } from "./postgres-migrations.js";
import { PostgresStore, type PostgresStoreOptions } from "./postgres-store.js";

// Needs PostgreSQL: CAIRN_TEST_PG_URL, default postgres://postgres@127.0.0.1:5432/test.
// Under CI (CI=true) an unreachable server fails the suite; elsewhere the suite is skipped with a message.
const PG_URL = process.env.CAIRN_TEST_PG_URL || "postgres://postgres@127.0.0.1:5432/test";
const available = await reachable();
// A server run with fsync=off (common in CI, for speed) is refused unless allowed: allow it in
// every test but the one about the refusal, and check the settings the server really has.
const server = available
  ? (await admin<{ fsync: string; sync: string }>("SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync"))[0]
  : undefined;
const weakServer = server !== undefined && (server.fsync === "off" || server.sync === "off");

/** A store on this server, allowing weak durability only when the test server has it. */
function pgStore(url: string, options: PostgresStoreOptions = {}): PostgresStore {
  return new PostgresStore(url, { allowWeakDurability: weakServer, ...options });
}

async function reachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch (error) {
    await client.end().catch(() => undefined);
    if (inCi()) throw new Error(`PostgreSQL is required under CI=true but ${PG_URL} is unreachable: ${(error as Error).message}`);
    console.warn(`Skipping the PostgreSQL store tests: ${PG_URL} is unreachable (${(error as Error).message}). Set CAIRN_TEST_PG_URL to run them.`);
    return false;
  }
}

function inCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== "" && ci !== "false" && ci !== "0";
}

/** A schema name no other test uses. */
function freshSchema(): string {
  return `cairn_test_${randomBytes(6).toString("hex")}`;
}

function urlFor(schema: string, params: Record<string, string> = {}): string {
  const url = new URL(PG_URL);
  url.searchParams.set("schema", schema);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return url.toString();
}

/** Runs SQL as an administrator, outside any store. */
async function admin<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function dropSchema(schema: string): Promise<void> {
  await admin(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

const opened: { store: Store; schema: string }[] = [];

/** A migrated store on a fresh schema, closed and dropped after the test. */
async function freshStore(options: PostgresStoreOptions = {}, schema = freshSchema()): Promise<PostgresStore> {
  const store = pgStore(urlFor(schema), options);
  opened.push({ store, schema });
  await store.migrate();
  return store;
}

/** Another store on the same schema (another "process"). */
function sibling(store: PostgresStore, options: PostgresStoreOptions = {}): PostgresStore {
  const other = pgStore(urlFor(store.schema), options);
  opened.push({ store: other, schema: store.schema });
  return other;
}

afterEach(async () => {
  const stores = opened.splice(0);
  await Promise.all(stores.map(({ store }) => store.close()));
  for (const schema of new Set(stores.map((entry) => entry.schema))) await dropSchema(schema);
});

const WF = { name: "wf", version: "1" };
const input = encode({});
const claim = (extra: Partial<ClaimRequest> = {}): ClaimRequest => ({ workerId: "w1", now: Date.now(), leaseMs: 30_000, limit: 10, workflows: [WF], ...extra });

async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms}ms`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(!available)("postgres", () => {
  storeConformance("postgres", {
    // Each test on its own schema: a new one, or one a previous test of this file left emptied.
    async create() {
      const schema = new URL(freshPgUrl({ recycle: true })).searchParams.get("schema")!;
      const store = pgStore(urlFor(schema), { clock: "caller" });
      await store.migrate();
      return store;
    },
    async destroy(store) {
      await store.close();
    },
  });

  describe("opening and migrating", () => {
    it("is opened by openStore from a postgres:// or postgresql:// URL, without the password in its url", async () => {
      const schema = freshSchema();
      const url = new URL(urlFor(schema));
      url.password = "secret";
      url.protocol = "postgresql:";
      // trust auth ignores the password; the store must not repeat it.
      const store = await openStore(url.toString(), { clock: "caller", allowWeakDurability: weakServer });
      opened.push({ store, schema });
      expect(store).toBeInstanceOf(PostgresStore);
      expect(store.url).not.toContain("secret");
      expect(store.url).toContain(`schema=${schema}`);
      expect((await store.createRun({ runId: "r", workflow: "w", version: "1", input }, 1)).created).toBe(true);
      const tables = await admin<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1", [schema]);
      expect(tables.map((t) => t.table_name)).toEqual([
        "agent_messages",
        "audit_log",
        "blobs",
        "cairn_migrations",
        "drained_versions",
        "human_requests",
        "inbox",
        "journal",
        "journal_compactions",
        "journal_listeners",
        "journal_text",
        "live_deltas",
        "live_listeners",
        "outbox",
        "run_deadlines",
        "run_tags",
        "run_values",
        "runs",
        "schedules",
        "step_flow_hits",
        "step_flow_slots",
        "step_flow_waiters",
        "tokens",
        "tool_calls",
        "workers",
      ]);
    });

    it("reports its settings: schema, version, clock and durability", async () => {
      const store = await freshStore();
      expect(await store.settings()).toMatchObject({
        schema: store.schema,
        schemaVersion: latestPostgresVersion(),
        clock: "database",
        fsync: server?.fsync,
        synchronousCommit: server?.sync,
        allowWeakDurability: weakServer,
        serverVersion: expect.stringMatching(/^\d+/) as string,
      });
      const fresh = pgStore(urlFor(freshSchema()), { clock: "caller" });
      opened.push({ store: fresh, schema: fresh.schema });
      expect(await fresh.settings()).toMatchObject({ schemaVersion: 0, clock: "caller" });
    });

    it("migrates a fresh schema exactly once when many stores open it at the same moment", async () => {
      const schema = freshSchema();
      const stores = Array.from({ length: 8 }, () => pgStore(urlFor(schema), { clock: "caller" }));
      for (const store of stores) opened.push({ store, schema });
      await Promise.all(stores.map((store) => store.migrate()));
      const applied = await admin<{ version: number; name: string }>(`SELECT version, name FROM "${schema}".cairn_migrations ORDER BY version`);
      expect(applied).toEqual(postgresMigrations().map(({ version, name }) => ({ version, name })));
      const created = await Promise.all(stores.map((store, i) => store.createRun({ runId: "contested", workflow: "w", version: String(i), input }, 1)));
      expect(created.filter((result) => result.created)).toHaveLength(1);
      await Promise.all(stores.map((store) => store.migrate()));
      expect(await admin(`SELECT version FROM "${schema}".cairn_migrations`)).toHaveLength(latestPostgresVersion());
    });

    it("refuses a schema written by a newer Cairn, without changing it", async () => {
      const store = await freshStore();
      await admin(`INSERT INTO "${store.schema}".cairn_migrations (version, name, applied_at) VALUES (999, '0999_future.sql', 0)`);
      const newer = sibling(store);
      await expect(newer.migrate()).rejects.toMatchObject({ code: "SCHEMA_TOO_NEW", message: expect.stringMatching(/schema version 999/) as string });
      expect(await admin(`SELECT version FROM "${store.schema}".cairn_migrations`)).toHaveLength(latestPostgresVersion() + 1);
    });

    it("refuses a schema that holds another application's tables, without changing it", async () => {
      const schema = freshSchema();
      await admin(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".runs (id int)`);
      const store = pgStore(urlFor(schema));
      opened.push({ store, schema });
      await expect(store.migrate()).rejects.toMatchObject({ code: "STORE_INVALID", message: expect.stringContaining("not a Cairn store") as string });
      const tables = await admin<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = $1", [schema]);
      expect(tables.map((t) => t.table_name)).toEqual(["runs"]);
    });

    it("explains that migrate() is needed before use", async () => {
      const schema = freshSchema();
      const store = pgStore(urlFor(schema));
      opened.push({ store, schema });
      await expect(store.getRun("x")).rejects.toThrow(/call migrate\(\)/);
    });

    it("refuses a session with synchronous_commit=off unless weak durability is allowed", async () => {
      const schema = freshSchema();
      const weak = new PostgresStore(urlFor(schema, { options: "-c synchronous_commit=off" }));
      opened.push({ store: weak, schema });
      const error = (await weak.migrate().catch((caught: unknown) => caught)) as Error;
      expect(error).toMatchObject({ code: "STORE_INVALID" });
      expect(error.message).toContain("synchronous_commit=off");
      expect(error.message).toContain("allowWeakDurability");
      expect(await admin("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema])).toEqual([]);
      const allowed = pgStore(urlFor(schema, { options: "-c synchronous_commit=off", allowWeakDurability: "1" }));
      opened.push({ store: allowed, schema });
      await allowed.migrate();
      expect(await allowed.listRuns({})).toEqual({ runs: [] });
    });

    it("keeps the user's server options beside its search_path", async () => {
      const store = await freshStore({}, freshSchema());
      const withOptions = pgStore(urlFor(store.schema, { options: "-c statement_timeout=4321" }));
      opened.push({ store: withOptions, schema: store.schema });
      await withOptions.migrate();
      await withOptions.createRun({ runId: "r", workflow: "w", version: "1", input }, 1);
      expect(await store.getRun("r")).toBeDefined();
    });
  });

  describe("database clock", () => {
    const FAR = 10 * 60_000;

    it("offers now() in database mode only, close to this machine's clock here", async () => {
      const store = await freshStore();
      expect(typeof store.now).toBe("function");
      const before = Date.now();
      const now = await store.now?.();
      expect(now).toBeGreaterThanOrEqual(before - 1000);
      expect(now).toBeLessThanOrEqual(Date.now() + 1000);
      expect(sibling(store, { clock: "caller" }).now).toBeUndefined();
    });

    it("does not fire a timer early for a worker whose clock runs ahead", async () => {
      const store = await freshStore();
      const dbNow = (await store.now?.()) ?? 0;
      await store.createRun({ runId: "r1", workflow: "wf", version: "1", input }, 0);
      const [held] = await store.claimRuns(claim());
      await store.commit(
        [{ runId: "r1", epoch: held?.leaseEpoch ?? -1, entries: [newEntry("run.suspended", null, { wakeAt: dbNow + 5 * 60_000, waitingFor: [] })] }],
        0,
      );
      expect(await store.claimRuns(claim({ now: Date.now() + FAR, workerId: "skewed" }))).toEqual([]);
      // The same request trusted by a caller-clock store would claim it: the skew is real.
      expect(await sibling(store, { clock: "caller" }).claimRuns(claim({ now: Date.now() + FAR, workerId: "skewed" }))).toHaveLength(1);
    });

    it("does not let a skewed worker steal a live lease, and times leases by the database", async () => {
      const store = await freshStore();
      await store.createRun({ runId: "r1", workflow: "wf", version: "1", input }, 0);
      const [held] = await store.claimRuns(claim({ now: 0, leaseMs: 30_000 }));
      const dbNow = (await store.now?.()) ?? 0;
      expect(held?.leaseExpiresAt).toBeGreaterThan(dbNow + 25_000);
      expect(held?.leaseExpiresAt).toBeLessThanOrEqual(dbNow + 30_000);
      const thief = sibling(store);
      expect(await thief.claimRuns(claim({ now: Date.now() + 3_600_000, workerId: "thief" }))).toEqual([]);
      expect(await store.renewLeases({ workerId: "w1", leases: [{ runId: "r1", epoch: 1 }], now: Date.now() + 3_600_000, leaseMs: 30_000 })).toEqual([]);
      const renewed = await store.getRun("r1");
      expect(renewed?.leaseExpiresAt).toBeLessThan(Date.now() + 60_000);
      expect(await thief.claimRuns(claim({ now: Date.now() + 3_600_000, workerId: "thief" }))).toEqual([]);
      expect(await store.getRun("r1")).toMatchObject({ leaseOwner: "w1", leaseEpoch: 1 });
    });

    it("stamps entries, rows, events, workers and stuck-run checks with the database time", async () => {
      const store = await freshStore();
      const start = (await store.now?.()) ?? 0;
      const { run } = await store.createRun({ runId: "r1", workflow: "wf", version: "1", input }, 42);
      expect(run.createdAt).toBeGreaterThanOrEqual(start);
      const [held] = await store.claimRuns(claim({ now: 42 }));
      await store.commit([{ runId: "r1", epoch: held?.leaseEpoch ?? -1, entries: [newEntry("step.started", "a#0", { attempt: 1 })] }], 42);
      await store.sendEvent({ runId: "r1", type: "t", eventId: "e", payload: "" }, 42);
      const end = (await store.now?.()) ?? 0;
      for (const entry of await store.readJournal("r1")) {
        expect(entry.at).toBeGreaterThanOrEqual(start);
        expect(entry.at).toBeLessThanOrEqual(end);
      }
      expect((await store.listInbox("r1"))[0]?.receivedAt).toBeGreaterThanOrEqual(start);
      await store.upsertWorker({ workerId: "w1", host: "h", pid: 1, workflows: [], runsHeld: 1, startedAt: 7, heartbeatAt: 7 });
      const [worker] = await store.listWorkers(start - 1);
      expect(worker?.heartbeatAt).toBeGreaterThanOrEqual(start);
      expect(worker?.startedAt).toBe(worker?.heartbeatAt);
      await store.createRun({ runId: "fresh", workflow: "other", version: "1", input }, 0);
      expect(await store.listStuckRuns(Date.now() + 24 * 3_600_000, 60_000)).toEqual([]);
      expect((await store.listStuckRuns(0, -10_000)).map((r) => r.runId)).toEqual(["fresh"]);
    });
  });

  describe("push wake-ups", () => {
    it("wakes a listener on another store when an event makes a run runnable", async () => {
      const a = await freshStore();
      const b = sibling(a);
      await b.migrate();
      await a.createRun({ runId: "r1", workflow: "wf", version: "1", input }, 0);
      const [held] = await a.claimRuns(claim());
      await a.commit([{ runId: "r1", epoch: held?.leaseEpoch ?? -1, entries: [newEntry("run.suspended", null, { wakeAt: null, waitingFor: [] })] }], 0);
      let wakes = 0;
      let woken: () => void = () => undefined;
      const unsubscribe = b.onWake(() => {
        wakes++;
        woken();
      });
      await within(5000, "LISTEN", b.listening());
      const first = new Promise<void>((resolve) => (woken = resolve));
      await a.sendEvent({ runId: "r1", type: "go", eventId: "e1", payload: "" }, 0);
      await within(2000, "the wake-up after sendEvent", first);
      expect(await b.claimRuns(claim({ workerId: "w2" }))).toHaveLength(1);
      unsubscribe();
      const count = wakes;
      await a.createRun({ runId: "r2", workflow: "wf", version: "1", input }, 0);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(wakes).toBe(count);
    });

    it("wakes on createRun, child runs, near timers and releases, but not on ordinary steps", async () => {
      const a = await freshStore();
      const b = sibling(a);
      await b.migrate();
      let wakes = 0;
      b.onWake(() => wakes++);
      await within(5000, "LISTEN", b.listening());
      const settle = async () => {
        await new Promise((resolve) => setTimeout(resolve, 250));
        const seen = wakes;
        wakes = 0;
        return seen > 0;
      };
      await a.createRun({ runId: "p", workflow: "wf", version: "1", input }, 0);
      expect(await settle()).toBe(true);
      const [held] = await a.claimRuns(claim());
      expect(await settle()).toBe(false);
      const epoch = held?.leaseEpoch ?? -1;
      await a.commit([{ runId: "p", epoch, entries: [newEntry("step.started", "a#0", { attempt: 1 })] }], 0);
      expect(await settle()).toBe(false);
      await a.commit([{ runId: "p", epoch, entries: [newEntry("child.started", "c#0", { childRunId: "c", workflow: "sub", version: "1", input: null })] }], 0);
      expect(await settle()).toBe(true);
      const dbNow = (await a.now?.()) ?? 0;
      await a.commit([{ runId: "p", epoch, entries: [newEntry("run.suspended", null, { wakeAt: dbNow + 3_600_000, waitingFor: [] })] }], 0);
      expect(await settle()).toBe(false);
      const [again] = await a.controlRun("p", ["suspended"], newEntry("run.released", null, { workerId: "op" }), 0).then(({ run }) => [run]);
      expect(again?.status).toBe("suspended");
      expect(await settle()).toBe(false);
      const [child] = await a.claimRuns(claim({ workflows: [{ name: "sub", version: "1" }] }));
      expect(await settle()).toBe(false);
      await a.commit([{ runId: "c", epoch: child?.leaseEpoch ?? -1, entries: [newEntry("run.suspended", null, { wakeAt: dbNow + 1000, waitingFor: [] })] }], 0);
      expect(await settle()).toBe(true);
      await a.createRun({ runId: "q", workflow: "wf", version: "1", input }, 0);
      const [q] = await a.claimRuns(claim());
      expect(await settle()).toBe(true);
      await a.sendEvent({ runId: "q", type: "t", eventId: "e1", payload: "" }, 0);
      expect(await settle()).toBe(false);
      await a.commit([{ runId: "q", epoch: q?.leaseEpoch ?? -1, entries: [newEntry("run.released", null, { workerId: "w1" })] }], 0);
      expect(await settle()).toBe(true);
    });

    it("reconnects after losing its LISTEN connection, and wakes listeners since notifications may have been missed", async () => {
      const a = await freshStore();
      const errors: Error[] = [];
      const b = sibling(a, { onConnectionError: (error) => errors.push(error) });
      await b.migrate();
      let wakes = 0;
      b.onWake(() => wakes++);
      await within(5000, "LISTEN", b.listening());
      const killed = await admin<{ ok: boolean }>(
        "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'cairn:listen' AND query = $1",
        [`LISTEN "cairn_wake_${a.schema}"`],
      );
      expect(killed).toEqual([{ ok: true }]);
      await within(
        5000,
        "the reconnection wake-up",
        (async () => {
          while (wakes === 0) await new Promise((resolve) => setTimeout(resolve, 20));
        })(),
      );
      expect(errors.length).toBeGreaterThan(0);
      await within(5000, "LISTEN again", b.listening());
      wakes = 0;
      await a.createRun({ runId: "after", workflow: "wf", version: "1", input }, 0);
      await within(
        2000,
        "a wake-up after reconnecting",
        (async () => {
          while (wakes === 0) await new Promise((resolve) => setTimeout(resolve, 20));
        })(),
      );
    });
  });

  describe("journal notices", () => {
    /** A plain LISTEN on the schema's journal channel (not advertised), and a sentinel to know every earlier notice arrived. */
    async function rawListener(schema: string) {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      const payloads: string[] = [];
      let arrived: ((payload: string) => void) | undefined;
      client.on("notification", (message) => {
        payloads.push(message.payload ?? "");
        arrived?.(message.payload ?? "");
      });
      await client.query(`LISTEN "cairn_journal_${schema}"`);
      return {
        payloads,
        /** Every notice committed before this call, in order (notices are delivered in commit order). */
        async drain(): Promise<string[]> {
          // A run id no test uses, so the store's subscribers can tell it apart.
          const sentinel = JSON.stringify([`sentinel-${randomBytes(4).toString("hex")}`]);
          const seen = new Promise<void>((resolve) => (arrived = (payload) => payload === sentinel && resolve()));
          await admin(`NOTIFY "cairn_journal_${schema}", '${sentinel}'`);
          await within(5000, "the sentinel notice", seen);
          return payloads.splice(0).filter((payload) => payload !== sentinel);
        },
        close: () => client.end(),
      };
    }

    /** Resolves once `check` holds, polling; fails after `ms`. */
    async function until(ms: number, what: string, check: () => boolean | Promise<boolean>): Promise<void> {
      await within(
        ms,
        what,
        (async () => {
          while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20));
        })(),
      );
    }

    it("sends one notice per commit naming only its streamed runs, none for runs no one streams, and learns of the advertised runs at once", async () => {
      const writer = await freshStore();
      const reader = sibling(writer);
      await reader.migrate();
      const raw = await rawListener(writer.schema);
      try {
        const long = Array.from({ length: 40 }, (_, i) => `${"x".repeat(240)}-${i}`);
        await writer.createRuns(
          ["r1", "r2", "quiet", ...long].map((runId) => ({ runId, workflow: "wf", version: "1", input })),
          0,
        );
        const held = await writer.claimRuns(claim({ limit: 100 }));
        expect(held).toHaveLength(43);
        const epochs = new Map(held.map((run) => [run.runId, run.leaseEpoch]));
        let steps = 0;
        const step = (runIds: string[]) =>
          writer.commit(
            runIds.map((runId) => ({ runId, epoch: epochs.get(runId) ?? -1, entries: [newEntry("step.started", `s${steps++}#0`, { attempt: 1 })] })),
            0,
          );
        await step(["r1"]);
        expect(await raw.drain()).toEqual([]); // no one advertised: the hot path pays no NOTIFY
        await within(5000, "the writer's LISTEN", writer.listening());

        const heard = { r1: 0, r2: 0, quiet: 0 };
        const stops = (["r1", "r2"] as const).map((runId) => reader.onJournal(runId, () => heard[runId]++));
        await within(5000, "advertising", reader.listeningForJournal());
        expect((await admin<{ run_id: string }>(`SELECT run_id FROM "${writer.schema}".journal_listeners ORDER BY 1`)).map((row) => row.run_id)).toEqual([
          "r1",
          "r2",
        ]);
        // The writer hears of the advertised runs through the wake channel, well before its periodic re-read (5 s).
        await until(4000, "a notice after the runs were advertised", async () => {
          await step(["r1"]);
          return heard.r1 > 0;
        });
        await raw.drain();
        heard.r1 = 0;

        // A commit of a run no one streams, while other runs of the schema are streamed: no NOTIFY.
        await step(["quiet"]);
        await step(["quiet"]);
        expect(await raw.drain()).toEqual([]);

        // One notice per commit, naming only the streamed runs among its runs.
        await step(["r1", "quiet", "r2"]);
        const payloads = await raw.drain();
        expect(payloads).toHaveLength(1);
        expect((JSON.parse(payloads[0]!) as string[]).sort()).toEqual(["r1", "r2"]);
        await until(2000, "the reader's notices", () => heard.r1 === 1 && heard.r2 === 1);
        expect(heard).toEqual({ r1: 1, r2: 1, quiet: 0 });

        // Streamed run ids past a payload (8000 bytes) in one commit: "any run", which reaches every subscriber.
        const stopLong = long.map((runId) => reader.onJournal(runId, () => undefined));
        await within(5000, "advertising", reader.listeningForJournal());
        await until(4000, "the any-run notice", async () => {
          await step(long);
          return (await raw.drain()).includes("*");
        });
        await until(2000, "the reader's notices", () => heard.r1 > 1 && heard.r2 > 1);
        for (const stop of stopLong) stop();

        // Unsubscribing a run removes its row, and the writer soon stops naming it.
        stops[1]!();
        await until(5000, "r2's advertisement to go", async () =>
          (await admin<{ run_id: string }>(`SELECT run_id FROM "${writer.schema}".journal_listeners`)).every((row) => row.run_id === "r1"),
        );
        await until(4000, "the writer to stop naming r2", async () => {
          await step(["r2"]);
          return (await raw.drain()).length === 0;
        });
        await step(["r1", "r2"]);
        expect(await raw.drain()).toEqual(['["r1"]']);

        // The last unsubscription removes the advertisement.
        stops[0]!();
        await until(5000, "the advertisement to go", async () => (await admin(`SELECT listener_id FROM "${writer.schema}".journal_listeners`)).length === 0);
      } finally {
        await raw.close();
      }
    });
  });

  describe("several stores on one schema", () => {
    it("claims each runnable run exactly once between two racing stores", async () => {
      const a = await freshStore();
      const b = sibling(a);
      await b.migrate();
      const dbNow = (await a.now?.()) ?? 0;
      for (let i = 0; i < 150; i++) await a.createRun({ runId: `r${String(i).padStart(3, "0")}`, workflow: "wf", version: "1", input }, 0);
      // Some suspended and due, some with an expired lease, among the pending ones.
      const early = await a.claimRuns(claim({ limit: 40, leaseMs: 1 }));
      for (const run of early.slice(0, 20)) {
        await a.commit([{ runId: run.runId, epoch: run.leaseEpoch, entries: [newEntry("run.suspended", null, { wakeAt: dbNow - 1, waitingFor: [] })] }], 0);
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
      const taken: RunRecord[] = [];
      const loop = async (store: PostgresStore, workerId: string) => {
        for (;;) {
          const got = await store.claimRuns(claim({ workerId, limit: 7 }));
          if (got.length === 0) return;
          taken.push(...got);
        }
      };
      await Promise.all([loop(a, "a1"), loop(a, "a2"), loop(a, "a3"), loop(b, "b1"), loop(b, "b2"), loop(b, "b3")]);
      const ids = taken.map((run) => run.runId);
      expect(ids).toHaveLength(150);
      expect(new Set(ids).size).toBe(150);
      // Both stores took part in the race (one claim loop of six may lose every round on a busy machine).
      expect(new Set(taken.map((run) => run.leaseOwner?.charAt(0)))).toEqual(new Set(["a", "b"]));
      const claims = await admin<{ n: number }>(`SELECT count(*)::int AS n FROM "${a.schema}".journal WHERE kind = 'run.claimed'`);
      expect(claims).toEqual([{ n: 40 + 150 }]);
    });

    it("fences a stale writer across stores and serialises concurrent commits to one run", async () => {
      const a = await freshStore({ clock: "caller" });
      const b = sibling(a, { clock: "caller" });
      await b.migrate();
      await a.createRun({ runId: "r1", workflow: "wf", version: "1", input }, 1);
      const [held] = await a.claimRuns(claim({ now: 1 }));
      const epoch = held?.leaseEpoch ?? -1;
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 === 0 ? a : b).commit([{ runId: "r1", epoch, entries: [newEntry("step.started", `s#${i}`, { attempt: 1 })] }], 2),
        ),
      );
      expect(results.flat().every((result) => result.ok)).toBe(true);
      expect((await a.readJournal("r1")).map((e) => e.seq)).toEqual(Array.from({ length: 22 }, (_, i) => i + 1));
      const [taken] = await b.claimRuns(claim({ now: 1_000_000, workerId: "w2" }));
      expect(taken?.leaseEpoch).toBe(2);
      expect(await a.commit([{ runId: "r1", epoch, entries: [] }], 3)).toEqual([{ ok: false, reason: "lease-lost" }]);
    });
  });

  describe("connection failures", () => {
    it("rejects operations when the server is unreachable, without crashing", async () => {
      const url = new URL(urlFor(freshSchema()));
      url.port = "1";
      const store = pgStore(url.toString(), { connectTimeoutMs: 2000 });
      await expect(store.migrate()).rejects.toThrow();
      await expect(store.getRun("x")).rejects.toThrow();
      await store.close();
    });

    it("carries on with new connections after its pooled ones were cut, and reports the idle ones", async () => {
      const errors: Error[] = [];
      const name = `cairn_drop_${randomBytes(4).toString("hex")}`;
      const schema = freshSchema();
      const store = pgStore(urlFor(schema, { application_name: name }), { onConnectionError: (error) => errors.push(error) });
      opened.push({ store, schema });
      await store.migrate();
      const cut = async () => {
        await Promise.all(Array.from({ length: 4 }, () => store.listRuns({})));
        const killed = await admin("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [name]);
        expect(killed.length).toBeGreaterThan(1);
      };
      // At once: the dead connections are still in the pool, and each is found dead on first use.
      await cut();
      await Promise.all(Array.from({ length: 3 }, (_, i) => store.createRun({ runId: `r${i}`, workflow: "wf", version: "1", input }, 0)));
      await cut();
      expect((await store.listRuns({})).runs).toHaveLength(3);
      expect(await store.claimRuns(claim())).toHaveLength(3);
      // Later: the pool hears of the idle ones dying, reports them and drops them.
      await cut();
      await within(
        5000,
        "the pool reporting a dropped connection",
        (async () => {
          while (errors.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
        })(),
      );
      expect(await store.getRun("r0")).toMatchObject({ status: "running" });
    });
  });
});
