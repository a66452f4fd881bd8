// Long agent runs (issue 17, part 1): does a turn's storage cost grow with the run's length?
//
//   npm run build && node bench/agent-turns.mjs [--turns 100,1000] [--huge] [--only sqlite,postgres] [--json FILE]
//
// One agent run per size and store, on the scripted model: every turn calls one tool (a ~400-byte
// result), the context window (64,000 tokens) fills and is summarized about every 330 turns, and
// the last turn's tool needs a person's approval, so the run ends suspended. Measured:
//   - bytes journaled per turn: the payload bytes of the journal entries of each turn (its loop
//     iteration, plus the loop snapshot written after it), plus the bytes of its agent_messages and
//     tool_calls rows where the store has them; reported as the mean over the first and the last 10%
//     of turns (at least 10), and their ratio;
//   - the store's size after the run (SQLite: page_count × page_size after a WAL checkpoint and
//     VACUUM; PostgreSQL: pg_total_relation_size of every table of the schema after VACUUM FULL);
//   - resume: a fresh engine (new process state, no cache) answers the pending approval and the time
//     from the answer to the run's completion (claim, the journal read from the newest snapshot,
//     replay, the tool call and the final model turn); and the journal a resume reads
//     (readJournalForResume: entries, bytes, ms).
// `--huge` adds 10,000 turns. The machine's load average is recorded before and after each case.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createEngine, silentLogger } from "../dist/src/index.js";
import { defineAgent, defineTool } from "../dist/src/agent/index.js";
import { ScriptedModel } from "../dist/src/agent/model/index.js";
import { connectPg } from "./lib/pg.mjs";
import { rootRequire } from "./lib/root-deps.mjs";
import { freshTarget } from "./lib/targets.mjs";

const USAGE = `node bench/agent-turns.mjs [options]   (build first: npm run build)
  --turns LIST   comma list of run lengths in turns (default 100,1000)
  --huge         add 10000 to the list
  --only STORES  comma list of sqlite, postgres, langgraph (default sqlite,postgres; langgraph: the same
                 conversation through LangGraph.js's messages channel and SqliteSaver, synchronous=FULL)
  --pg-url URL   PostgreSQL server (default CAIRN_TEST_PG_URL or postgres://postgres@127.0.0.1:5432/test)
  --json FILE    also write the figures as JSON
  -h, --help     this text
`;
let args;
try {
  args = parseArgs({
    options: {
      turns: { type: "string", default: "100,1000" },
      huge: { type: "boolean", default: false },
      only: { type: "string", default: "sqlite,postgres" },
      "pg-url": { type: "string", default: process.env.CAIRN_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test" },
      json: { type: "string", default: "" },
      help: { type: "boolean", short: "h", default: false },
    },
  }).values;
} catch (error) {
  process.stderr.write(`${error.message}\n\n${USAGE}`);
  process.exit(2);
}
if (args.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const sizes = args.turns.split(",").map(Number).concat(args.huge ? [10_000] : []);
if (sizes.some((n) => !Number.isSafeInteger(n) || n < 10)) {
  process.stderr.write(`--turns takes whole numbers ≥ 10\n\n${USAGE}`);
  process.exit(2);
}
const stores = args.only.split(",");

const TOOL_OUTPUT = "Result: ".padEnd(400, "lorem ipsum dolor sit amet ");
const SUMMARY_PROMPT = "bench-summary";

/** The agent of a run of `turns` turns: one tool call per turn; the last call needs approval. */
function makeAgent(turns) {
  const lookup = defineTool({
    name: "lookup",
    description: "Looks something up.",
    input: (await_zod()).object({ q: (await_zod()).string() }),
    effect: "idempotent",
    run: async ({ q }) => `${TOOL_OUTPUT} (${q})`,
  });
  const approve = defineTool({
    name: "publish",
    description: "Publishes the answer (needs approval).",
    input: (await_zod()).object({ text: (await_zod()).string() }),
    effect: "idempotent",
    approval: true,
    run: async () => "published",
  });
  // One scripted reply function per call (summaries included); the turn number comes from the newest
  // tool result in the window (summaries drop older ones), so the script does not depend on the window.
  const reply = (request) => {
    if (request.system === SUMMARY_PROMPT) return { content: `Summary of the earlier conversation: ${"facts found, ".repeat(20)}go on with the lookups.` };
    const last = lastToolText(request.messages);
    if (last === "published") return { content: "Done." };
    const done = last === null ? 0 : Number(/#(\d+)\)/.exec(last)?.[1] ?? "0");
    if (done + 1 >= turns) return { content: [{ type: "tool_use", id: `call_${done + 1}`, name: "publish", input: { text: "the answer" } }] };
    return {
      content: [
        { type: "text", text: `Turn ${done + 1}: I will look up item ${done + 1}.` },
        { type: "tool_use", id: `call_${done + 1}`, name: "lookup", input: { q: `item #${done + 1}` } },
      ],
    };
  };
  const model = new ScriptedModel(
    Array.from({ length: turns * 2 + 100 }, () => reply),
    { cursor: "calls" },
  );
  return defineAgent({
    name: `bench-agent-${turns}`,
    model,
    system: "You look things up.",
    tools: [lookup, approve],
    context: { windowTokens: 64_000, summaryPrompt: SUMMARY_PROMPT, keepRecent: 6 },
    maxTokens: 1024,
  });
}

let zod;
function await_zod() {
  zod ??= rootRequire("zod");
  return zod.z ?? zod;
}

function lastToolText(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role === "tool") return m.content.at(-1)?.content ?? null;
  }
  return null;
}

/** Bytes per turn: journal payloads by loop iteration (a snapshot counts for the iteration before it) plus row bytes. */
function bytesPerTurn(entries, rowBytes) {
  const perTurn = [];
  let last = 0;
  for (const entry of entries) {
    const m = /^turn#0\/(\d+)\//.exec(entry.opKey ?? "");
    let turn = m ? Number(m[1]) : entry.kind === "loop.snapshot" ? last : null;
    if (turn === null) continue;
    last = turn;
    perTurn[turn] = (perTurn[turn] ?? 0) + entry.bytes;
  }
  for (const [turn, bytes] of rowBytes) perTurn[turn] = (perTurn[turn] ?? 0) + bytes;
  return perTurn.map((b) => b ?? 0);
}

/** Mean bytes per turn by entry kind (and `rows`) over the turns `from…to` (exclusive): where a turn's bytes go. */
function bytesByKind(entries, rowBytes, from, to) {
  const sums = {};
  let last = 0;
  for (const entry of entries) {
    const m = /^turn#0\/(\d+)\//.exec(entry.opKey ?? "");
    const turn = m ? Number(m[1]) : entry.kind === "loop.snapshot" ? last : null;
    if (turn === null) continue;
    last = turn;
    if (turn >= from && turn < to) sums[entry.kind] = (sums[entry.kind] ?? 0) + entry.bytes;
  }
  for (const [turn, bytes] of rowBytes) if (turn >= from && turn < to) sums.rows = (sums.rows ?? 0) + bytes;
  return Object.fromEntries(Object.entries(sums).map(([kind, bytes]) => [kind, Math.round(bytes / Math.max(1, to - from))]));
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

async function journalBytes(target, runId) {
  if (target.file) {
    const Database = rootRequire("better-sqlite3");
    const db = new Database(target.file, { readonly: true, timeout: 10_000 });
    try {
      const entries = db
        .prepare(
          `SELECT kind, op_key AS opKey, length(CAST(payload AS BLOB)) AS bytes, CASE WHEN payload LIKE '{"$cairn":"blob"%' THEN payload END AS marker
           FROM journal WHERE run_id = ? ORDER BY seq`,
        )
        .all(runId)
        .map(withBlobBytes);
      const rows = hasTable(db, "agent_messages")
        ? db
            .prepare(
              `SELECT turn, SUM(bytes) AS bytes FROM (
                 SELECT turn, length(CAST(content AS BLOB)) AS bytes FROM agent_messages WHERE run_id = ?
                 UNION ALL SELECT turn, length(CAST(args AS BLOB)) + length(CAST(coalesce(result, '') AS BLOB)) FROM tool_calls WHERE run_id = ?)
               GROUP BY turn`,
            )
            .all(runId, runId)
            .map((r) => [r.turn, r.bytes])
        : [];
      return { entries, rows };
    } finally {
      db.close();
    }
  }
  const client = await connectPg(target.url);
  try {
    const s = `"${target.schema}"`;
    const { rows: found } = await client.query(
      `SELECT kind, op_key AS "opKey", octet_length(payload::text)::int AS bytes, CASE WHEN payload LIKE '{"$cairn":"blob"%' THEN payload END AS marker
       FROM ${s}.journal WHERE run_id = $1 ORDER BY seq`,
      [runId],
    );
    const entries = found.map(withBlobBytes);
    const { rows: t } = await client.query(`SELECT to_regclass($1) AS t`, [`${target.schema}.agent_messages`]);
    let rows = [];
    if (t[0].t) {
      const r = await client.query(
        `SELECT turn, SUM(bytes)::int AS bytes FROM (
           SELECT turn, octet_length(content::text) AS bytes FROM ${s}.agent_messages WHERE run_id = $1
           UNION ALL SELECT turn, octet_length(args::text) + coalesce(octet_length(result::text), 0) FROM ${s}.tool_calls WHERE run_id = $1) x GROUP BY turn`,
        [runId],
      );
      rows = r.rows.map((x) => [x.turn, x.bytes]);
    }
    return { entries, rows };
  } finally {
    await client.end();
  }
}

/** A payload offloaded to a blob counts with the blob's size (the marker gives it). */
function withBlobBytes(entry) {
  if (!entry.marker) return entry;
  const size = Number(/"size":(\d+)/.exec(entry.marker)?.[1] ?? 0);
  return { ...entry, bytes: entry.bytes + size };
}

function hasTable(db, name) {
  return db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

async function storeSize(target) {
  if (target.file) {
    const Database = rootRequire("better-sqlite3");
    const db = new Database(target.file, { timeout: 10_000 });
    try {
      db.pragma("wal_checkpoint(TRUNCATE)");
      db.exec("VACUUM");
      db.pragma("wal_checkpoint(TRUNCATE)");
      let tables = {};
      try {
        tables = Object.fromEntries(db.prepare("SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC LIMIT 12").all().map((r) => [r.name, r.bytes]));
      } catch {
        // dbstat is not compiled in: no breakdown
      }
      return { bytes: db.pragma("page_count", { simple: true }) * db.pragma("page_size", { simple: true }), tables };
    } finally {
      db.close();
    }
  }
  const client = await connectPg(target.url);
  try {
    const { rows: tables } = await client.query(
      `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`,
      [target.schema],
    );
    let total = 0;
    const sizes = {};
    for (const { relname } of tables) {
      await client.query(`VACUUM FULL "${target.schema}"."${relname}"`);
      const { rows } = await client.query(`SELECT pg_total_relation_size($1::regclass)::bigint AS bytes`, [`"${target.schema}"."${relname}"`]);
      total += Number(rows[0].bytes);
      sizes[relname] = Number(rows[0].bytes);
    }
    const top = Object.entries(sizes).sort((a, b) => b[1] - a[1]).slice(0, 12);
    return { bytes: total, tables: Object.fromEntries(top) };
  } finally {
    await client.end();
  }
}

async function waitFor(check, what, timeoutMs = 600_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function runCase(kind, turns, tmpDir) {
  const target = freshTarget(kind, { tmpDir, pgUrl: args["pg-url"], name: `agent-${turns}` });
  const loadBefore = loadavg()[0];
  const agent = makeAgent(turns);
  const runId = `agent-${turns}`;
  try {
    const t0 = performance.now();
    {
      const engine = await createEngine({ store: target.url, workflows: [agent], logger: silentLogger });
      try {
        const worker = engine.startWorker({ concurrency: 4, pollInterval: 5 });
        await engine.start(agent, { prompt: "Look up everything." }, { runId });
        await waitFor(async () => ["suspended", "failed"].includes((await engine.getRun(runId)).status), `${runId} to suspend`, Math.max(600_000, turns * 1_000));
        const run = await engine.getRun(runId);
        if (run.status !== "suspended") throw new Error(`${runId} ${run.status}: ${JSON.stringify(run.error)}`);
        await worker.stop({ drain: true });
      } finally {
        await engine.close();
      }
    }
    const runMs = performance.now() - t0;
    const { entries, rows } = await journalBytes(target, runId);
    const perTurn = bytesPerTurn(entries, rows);
    const n = perTurn.length;
    const w = Math.max(10, Math.floor(n / 10));
    const first = mean(perTurn.slice(0, w));
    const lastW = mean(perTurn.slice(n - w - 1, n - 1)); // the final (approval) turn excluded
    // Resume: a fresh engine reads what a resume reads, then answers the approval and times completion.
    const engine = await createEngine({ store: target.url, workflows: [agent], logger: silentLogger });
    let resume;
    try {
      const r0 = performance.now();
      const read = await engine.store.readJournalForResume(runId);
      const readMs = performance.now() - r0;
      const readBytes = read.reduce((sum, entry) => sum + Buffer.byteLength(entry.payload), 0);
      const [request] = await engine.listHumanRequests({ status: "pending", runId });
      if (!request) throw new Error(`${runId}: no pending approval`);
      const worker = engine.startWorker({ concurrency: 4, pollInterval: 5 });
      const a0 = performance.now();
      await engine.respondToHuman(request.requestId, { action: "answer", option: "approve", by: "bench" });
      const out = await engine.result(runId, { timeoutMs: 600_000 });
      const resumeMs = performance.now() - a0;
      if (out.text !== "Done.") throw new Error(`${runId} ended with ${JSON.stringify(out.text)}`);
      await worker.stop({ drain: true });
      resume = { resumeMs, readMs, readEntries: read.length, readBytes };
    } finally {
      await engine.close();
    }
    const size = await storeSize(target);
    return {
      store: kind,
      turns,
      runMs,
      journalEntries: entries.length,
      bytesPerTurnFirst: first,
      bytesPerTurnLast: lastW,
      bytesPerTurnMean: mean(perTurn.slice(0, n - 1)),
      bytesPerTurnMax: Math.max(...perTurn.slice(0, n - 1)),
      growth: lastW / first,
      lastByKind: bytesByKind(entries, rows, n - w - 1, n - 1),
      storeBytes: size.bytes,
      storeBytesPerTurn: size.bytes / turns,
      storeTables: size.tables,
      ...resume,
      loadBefore,
      loadAfter: loadavg()[0],
    };
  } finally {
    await target.cleanup();
  }
}

/**
 * The same conversation through LangGraph.js: a `messages` channel (MessagesAnnotation, the channel
 * its agents use) on an agent → tools → agent graph, checkpointed by SqliteSaver with
 * synchronous=FULL (Cairn's durability). Each turn appends the assistant message (the same text and
 * tool call) and the tool message (the same ~430-character result); the window is summarized at the
 * point Cairn's is (3/4 of 64,000 tokens at ~4 characters a token: the messages removed, a summary and
 * the last 6 kept), so both carry the same window. LangGraph writes a checkpoint per super-step (two
 * per turn), each with the whole channel. Bytes per turn: its checkpoint and pending-write blobs
 * (checkpoint + metadata + writes). Resume read: a fresh saver's read of the newest checkpoint.
 */
async function runLangGraph(turns, tmpDir) {
  const { StateGraph, MessagesAnnotation, START, END, REMOVE_ALL_MESSAGES } = await import("@langchain/langgraph");
  const { AIMessage, ToolMessage, HumanMessage, RemoveMessage } = await import("@langchain/core/messages");
  const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
  const { default: Database } = await import("better-sqlite3");
  const file = join(tmpDir, `langgraph-${turns}.db`);
  const loadBefore = loadavg()[0];
  const open = () => {
    const db = new Database(file);
    const saver = new SqliteSaver(db);
    saver.setup();
    db.pragma("synchronous = FULL");
    return { db, saver };
  };
  const SUMMARY = `Summary of the earlier conversation: ${"facts found, ".repeat(20)}go on with the lookups.`;
  const charsOf = (m) => (typeof m.content === "string" ? m.content.length : JSON.stringify(m.content).length) + JSON.stringify(m.tool_calls ?? []).length;
  let done = 0;
  let windowChars = "Look up everything.".length;
  const agentNode = (state) => {
    const out = [];
    if (windowChars / 4 > 48_000) {
      const kept = state.messages.slice(-6);
      out.push(new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), new HumanMessage(SUMMARY), ...kept);
      windowChars = SUMMARY.length + kept.reduce((sum, m) => sum + charsOf(m), 0);
    }
    const message =
      done >= turns
        ? new AIMessage("Done.")
        : new AIMessage({
            content: `Turn ${done + 1}: I will look up item ${done + 1}.`,
            tool_calls: [{ id: `call_${done + 1}`, name: "lookup", args: { q: `item #${done + 1}` }, type: "tool_call" }],
          });
    windowChars += charsOf(message);
    out.push(message);
    return { messages: out };
  };
  const toolsNode = (state) => {
    const call = state.messages.at(-1).tool_calls[0];
    done += 1;
    const message = new ToolMessage({ content: `${TOOL_OUTPUT} (${call.args.q})`, tool_call_id: call.id });
    windowChars += charsOf(message);
    return { messages: [message] };
  };
  const { db, saver } = open();
  const app = new StateGraph(MessagesAnnotation)
    .addNode("agent", agentNode)
    .addNode("tools", toolsNode)
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (state) => (state.messages.at(-1).tool_calls?.length ? "tools" : END))
    .addEdge("tools", "agent")
    .compile({ checkpointer: saver });
  const config = { configurable: { thread_id: `agent-${turns}` }, recursionLimit: turns * 2 + 10 };
  const t0 = performance.now();
  const final = await app.invoke({ messages: [new HumanMessage("Look up everything.")] }, config);
  const runMs = performance.now() - t0;
  if (final.messages.at(-1).content !== "Done." || done !== turns) throw new Error(`langgraph ${turns}: ended after ${done} turns`);
  // Bytes by super-step (metadata.step), then by turn: steps 2t+1 (agent) and 2t+2 (tools) are turn t.
  const stepOf = new Map();
  const perStep = [];
  for (const row of db.prepare(`SELECT checkpoint_id AS id, length(checkpoint) + length(metadata) AS bytes, CAST(metadata AS TEXT) AS meta FROM checkpoints`).all()) {
    const step = JSON.parse(row.meta).step;
    stepOf.set(row.id, step);
    perStep[step + 1] = (perStep[step + 1] ?? 0) + row.bytes;
  }
  for (const row of db.prepare(`SELECT checkpoint_id AS id, SUM(length(value)) AS bytes FROM writes GROUP BY checkpoint_id`).all()) {
    const step = stepOf.get(row.id) ?? 0;
    perStep[step + 1] = (perStep[step + 1] ?? 0) + row.bytes;
  }
  const perTurn = [];
  for (let step = 0; step < perStep.length; step++) {
    const turn = Math.max(0, Math.floor((step - 1) / 2));
    perTurn[turn] = (perTurn[turn] ?? 0) + (perStep[step] ?? 0);
  }
  const n = Math.min(turns, perTurn.length);
  const w = Math.max(10, Math.floor(n / 10));
  const first = mean(perTurn.slice(0, w));
  const lastW = mean(perTurn.slice(n - w, n));
  db.close();
  const fresh = open();
  const r0 = performance.now();
  const tuple = await fresh.saver.getTuple({ configurable: { thread_id: `agent-${turns}` } });
  const readMs = performance.now() - r0;
  const readBytes = JSON.stringify(tuple.checkpoint).length;
  fresh.db.pragma("wal_checkpoint(TRUNCATE)");
  fresh.db.exec("VACUUM");
  fresh.db.pragma("wal_checkpoint(TRUNCATE)");
  const storeBytes = fresh.db.pragma("page_count", { simple: true }) * fresh.db.pragma("page_size", { simple: true });
  const checkpoints = fresh.db.prepare("SELECT count(*) AS n FROM checkpoints").get().n;
  fresh.db.close();
  rmSync(file, { force: true });
  return {
    store: "langgraph-sqlite-full",
    turns,
    runMs,
    checkpoints,
    bytesPerTurnFirst: first,
    bytesPerTurnLast: lastW,
    bytesPerTurnMean: mean(perTurn.slice(0, n)),
    bytesPerTurnMax: Math.max(...perTurn.slice(0, n)),
    growth: lastW / first,
    storeBytes,
    storeBytesPerTurn: storeBytes / turns,
    resumeMs: null,
    readMs,
    readEntries: 1,
    readBytes,
    loadBefore,
    loadAfter: loadavg()[0],
  };
}

const tmpDir = mkdtempSync(join(tmpdir(), "cairn-agent-bench-"));
const results = [];
try {
  for (const kind of stores) {
    for (const turns of sizes) {
      process.stderr.write(`${kind} ${turns} turns…\n`);
      const result = kind === "langgraph" ? await runLangGraph(turns, tmpDir) : await runCase(kind, turns, tmpDir);
      results.push(result);
      process.stderr.write(`${JSON.stringify(result)}\n`);
    }
  }
} finally {
  rmSync(tmpDir, { recursive: true, force: true });
}
const f = (x, d = 0) => x.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
const lines = [
  "| store | turns | bytes/turn, first 10% | bytes/turn, last 10% | last ÷ first | mean | max | store size | size/turn | resume (answer → done) | resume read | load before → after |",
  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
  ...results.map(
    (r) =>
      `| ${r.store} | ${f(r.turns)} | ${f(r.bytesPerTurnFirst)} B | ${f(r.bytesPerTurnLast)} B | ×${f(r.growth, 2)} | ${f(r.bytesPerTurnMean)} B | ${f(r.bytesPerTurnMax)} B | ${f(r.storeBytes / 1024)} KB | ${f(r.storeBytesPerTurn)} B | ${r.resumeMs === null ? "–" : `${f(r.resumeMs, 1)} ms`} | ${f(r.readEntries)} entries, ${f(r.readBytes / 1024, 1)} KB, ${f(r.readMs, 1)} ms | ${f(r.loadBefore, 2)} → ${f(r.loadAfter, 2)} |`,
  ),
];
process.stdout.write(`${lines.join("\n")}\n`);
if (args.json) writeFileSync(args.json, JSON.stringify(results, null, 2));
