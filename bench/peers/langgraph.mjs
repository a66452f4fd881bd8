// LangGraph.js, the same work as Cairn's throughput cases: a 10-node linear graph whose nodes each
// add one to the state, compiled with a checkpointer (one checkpoint per super-step, as LangGraph
// persists a thread). Run by bench/cases/peers.mjs in a process of its own:
//   node bench/peers/langgraph.mjs sqlite        SqliteSaver on BENCH_LG_FILE, as the package sets it up
//                                                (WAL; synchronous is better-sqlite3's default for WAL, NORMAL)
//   node bench/peers/langgraph.mjs sqlite-full   the same with synchronous=FULL, Cairn's durability setting
//   node bench/peers/langgraph.mjs postgres      PostgresSaver on BENCH_PG_URL, tables in schema BENCH_LG_SCHEMA
// BENCH_CONCURRENCY threads at once (a closed loop), BENCH_REPS, BENCH_TARGET_SEC.
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { exitWithParent, report } from "../lib/child.mjs";
import { countPgStatements, settingsFromEnv, throughputLoop } from "./loop.mjs";
import { isLocalPg } from "../lib/cpu.mjs";

exitWithParent();

const NODES = 10;
const kind = process.argv[2];
const settings = settingsFromEnv();

let saver;
let counter = null;
let close = async () => {};
let describe = {};
if (kind === "sqlite" || kind === "sqlite-full") {
  const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
  const { default: Database } = await import("better-sqlite3");
  const db = new Database(process.env.BENCH_LG_FILE);
  saver = new SqliteSaver(db);
  saver.setup(); // what the saver does lazily on first use: WAL and its tables
  if (kind === "sqlite-full") db.pragma("synchronous = FULL");
  describe = { journalMode: db.pragma("journal_mode", { simple: true }), synchronous: ["OFF", "NORMAL", "FULL", "EXTRA"][db.pragma("synchronous", { simple: true })] };
  close = async () => db.close();
} else if (kind === "postgres") {
  const { PostgresSaver } = await import("@langchain/langgraph-checkpoint-postgres");
  const { default: pg } = await import("pg");
  counter = await countPgStatements();
  const pool = new pg.Pool({ connectionString: process.env.BENCH_PG_URL });
  saver = new PostgresSaver(pool, undefined, { schema: process.env.BENCH_LG_SCHEMA });
  await saver.setup();
  describe = { poolMax: pool.options.max };
  close = () => pool.end();
} else {
  process.stderr.write(`unknown checkpointer ${kind}\n`);
  process.exit(2);
}

// Count what the checkpointer is asked to write: put (a checkpoint) and putWrites (a node's writes).
const writes = { put: 0, putWrites: 0 };
for (const name of Object.keys(writes)) {
  const original = saver[name].bind(saver);
  saver[name] = (...args) => {
    writes[name] += 1;
    return original(...args);
  };
}

const State = Annotation.Root({ n: Annotation() });
let graph = new StateGraph(State);
for (let i = 0; i < NODES; i++) graph = graph.addNode(`n${i}`, (state) => ({ n: state.n + 1 }));
graph = graph.addEdge(START, "n0");
for (let i = 1; i < NODES; i++) graph = graph.addEdge(`n${i - 1}`, `n${i}`);
graph = graph.addEdge(`n${NODES - 1}`, END);
const app = graph.compile({ checkpointer: saver });

let graphs = 0;
const out = await throughputLoop(
  async (id) => {
    const state = await app.invoke({ n: 0 }, { configurable: { thread_id: `${process.pid}-${id}` } });
    if (state.n !== NODES) throw new Error(`thread ${id} ended with n = ${state.n}, not ${NODES}`);
    graphs += 1;
  },
  { ...settings, steps: NODES, label: "nodes", counter, serverCpu: kind === "postgres" && isLocalPg(process.env.BENCH_PG_URL) },
);
await close();
report.result({ ...out, ...describe, checkpointsPerGraph: writes.put / graphs, putWritesPerGraph: writes.putWrites / graphs });
process.exit(0);
