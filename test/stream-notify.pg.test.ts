// A stream served by a process without a worker, of a run a worker in another process runs: on
// PostgreSQL the journal notices wake it at once, though its poll interval is far beyond the test;
// and the commits of a run no one streams carry no notice.
import { resolve } from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { parseSse, type SseEvent } from "../src/client/sse.js";
import { createEngine } from "../src/engine/create-engine.js";
import { silentLogger } from "../src/engine/logger.js";
import type { PostgresStore } from "../src/store/postgres/postgres-store.js";
import { waitFor } from "../src/testing/wait-for.js";
import { onCleanup } from "./support/engines.js";
import { PG_URL, freshPgUrl, pgReachable } from "./support/pg-schema.js";
import { spawnWorker } from "./support/processes.js";
import { TEST_WORKFLOWS, testServer } from "./support/server.js";

const reachable = await pgReachable();
const WORKFLOWS = resolve("test/fixtures/stream-workflows.mjs");
/** Far beyond the test: an entry that arrives in time was pushed, not polled. */
const POLL_MS = 60_000;
/** Each round (event sent → every entry it causes streamed) must finish well inside the poll interval. */
const ROUND_MS = 5_000;

describe.skipIf(!reachable)("run streams across processes on PostgreSQL", () => {
  it("streams entries a worker in another process commits at once, each once and in order, with the poll at 60 s; an unstreamed run's commits send no notice", async () => {
    const url = freshPgUrl();
    // Every journal notice of the schema, as the database delivers them.
    const raw = new pg.Client({ connectionString: PG_URL });
    await raw.connect();
    onCleanup(() => raw.end());
    const notices: string[] = [];
    raw.on("notification", (message) => notices.push(message.payload ?? ""));
    await raw.query(`LISTEN "cairn_journal_${new URL(url).searchParams.get("schema")}"`);
    const engine = await createEngine({ store: url, workflows: TEST_WORKFLOWS, logger: silentLogger });
    onCleanup(() => engine.close());
    const server = await testServer(engine, { streamPollMs: POLL_MS, keepAliveMs: POLL_MS });
    const worker = spawnWorker({ CAIRN_TEST_STORE: url, CAIRN_TEST_WORKFLOWS: WORKFLOWS });
    await worker.ready;

    await engine.start("paced", { steps: 3 }, { runId: "far" });
    // A run the same worker moves along in every round, which no one streams.
    await engine.start("paced", { steps: 3 }, { runId: "unwatched" });
    for (const runId of ["far", "unwatched"])
      await waitFor(async () => (await engine.getRun(runId)).status === "suspended", { timeoutMs: 10_000, what: `the worker to run ${runId}'s first step` });

    const controller = new AbortController();
    onCleanup(() => controller.abort());
    const res = await fetch(`${server.url}/runs/far/stream`, { signal: controller.signal });
    expect(res.status).toBe(200);
    const events: SseEvent[] = [];
    const reading = (async () => {
      for await (const event of parseSse(res.body!)) {
        events.push(event);
        if (event.event === "end" || event.event === "error") break;
      }
    })().catch((error: unknown) => {
      // Aborted by the cleanup of a test that already failed.
      if (!controller.signal.aborted) throw error;
    });
    const streamed = () => events.filter((e) => e.event === "entry").map((e) => Number(e.id));
    const caughtUp = async (what: string, deadline: number) => {
      const { entries, status } = await engine.getRun("far");
      await waitFor(() => streamed().at(-1) === entries, { timeoutMs: Math.max(1, deadline - Date.now()), what });
      return status;
    };

    // The stream's first read (at open) sends what is there; from now on only a push is in time.
    await caughtUp("the stream's first read", Date.now() + 10_000);
    await (engine.store as PostgresStore).listeningForJournal();
    const rounds: number[] = [];
    for (let round = 1; round <= 3; round++) {
      const before = (await engine.getRun("far")).entries;
      const unwatchedBefore = (await engine.getRun("unwatched")).entries;
      const sent = Date.now();
      await engine.sendEvent("unwatched", "go", null, { eventId: `go-${round}` });
      await engine.sendEvent("far", "go", null, { eventId: `go-${round}` });
      await waitFor(
        async () => {
          const run = await engine.getRun("far");
          return (run.status === "suspended" || run.status === "completed") && run.entries > before;
        },
        { timeoutMs: ROUND_MS, what: `the worker to handle event ${round}` },
      );
      await waitFor(
        async () => {
          const run = await engine.getRun("unwatched");
          return (run.status === "suspended" || run.status === "completed") && run.entries > unwatchedBefore;
        },
        { timeoutMs: ROUND_MS, what: `the worker to handle the unwatched run's event ${round}` },
      );
      await caughtUp(`round ${round}'s entries on the stream`, sent + ROUND_MS);
      rounds.push(Date.now() - sent);
    }
    await waitFor(() => events.some((e) => e.event === "end"), { timeoutMs: ROUND_MS, what: "event: end" });
    await reading;

    const journal = await engine.journal("far");
    expect((await engine.getRun("far")).status).toBe("completed");
    expect(streamed()).toEqual(journal.map((e) => e.seq));
    expect(events.filter((e) => e.event === "entry").map((e) => (JSON.parse(e.data) as { kind: string }).kind)).toEqual(journal.map((e) => e.kind));
    for (const ms of rounds) expect(ms).toBeLessThan(ROUND_MS);
    // The unwatched run committed as often, while "far" was streamed, and no notice named it.
    expect((await engine.journal("unwatched")).length).toBeGreaterThan(6);
    await raw.query("SELECT 1"); // notices reach a connection between its queries' results
    expect(notices.length).toBeGreaterThan(0);
    expect(new Set(notices)).toEqual(new Set(['["far"]']));
  });
});
