/**
 * `npm run demo`: durability, shown rather than told.
 *
 * The research agent (examples/research-agent.ts) runs in a separate worker
 * process: its model plans four questions and calls the search tool for all of
 * them in one turn. Half-way through the searches the demo kills that process
 * with SIGKILL (no clean-up, like a power cut), starts a fresh worker, and shows
 * from an effect ledger kept outside the database that finished tool calls were
 * not run again. Then it plays the human reviewer (`ctx.askHuman`) and prints
 * the journals.
 *
 * Run from the repository root after `npm run build`. Set CAIRN_DEMO_KEEP=1 to keep
 * the database for `cairn show`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createEngine, type Engine, type JournalEntryView } from "cairn";
import { workflows } from "./index.js";
import { countLedger, LEDGER_ENV } from "./ledger.js";
import { research, STEP_MS_ENV, type ResearchResult } from "./research-agent.js";

// The demo shows the scripted model, whatever keys the environment holds (`npm start` uses a real one).
for (const key of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CAIRN_MODEL"]) delete process.env[key];

const CLI = resolve("dist/src/cli/main.js");
const WORKFLOWS_MODULE = resolve("dist/examples/index.js");
const RUN_ID = "demo-research";
/** The agent's first run, a child of the research run (the workflow starts it with ctx.child). */
const AGENT_RUN_ID = `${RUN_ID}/researcher#0`;
/** The review question's request id: `<runId>:<op key>`. */
const REVIEW_ID = `${RUN_ID}:review#0`;
/** How long each search takes, times its position (400 ms, 800 ms, …), so the kill lands mid-run. */
const STEP_MS = process.env[STEP_MS_ENV] ?? "400";
/**
 * Lease length for the demo's workers. A killed worker's lease must expire before another
 * worker may take the run over; production keeps the 30 s default, the demo shortens it.
 */
const LEASE_MS = 2_000;

// ── narration ────────────────────────────────────────────────────────────────

const color = process.stdout.isTTY && !process.env.NO_COLOR;
const bold = (text: string): string => (color ? `\x1b[1m${text}\x1b[22m` : text);
const dim = (text: string): string => (color ? `\x1b[2m${text}\x1b[22m` : text);
let chapter = 0;

function say(...lines: string[]): void {
  for (const line of lines) process.stdout.write(`${line}\n`);
}

function heading(title: string): void {
  chapter += 1;
  say("", bold(`${chapter}. ${title}`));
}

/** The one detail of an entry worth showing a newcomer. */
function detail(entry: JournalEntryView): string {
  const data = (entry.data ?? {}) as Record<string, unknown>;
  switch (entry.kind) {
    case "run.claimed":
      return `by ${String(data.workerId)}`;
    case "step.started":
      return `attempt ${String(data.attempt)}`;
    case "step.reconciled":
      return `intent without outcome → ${String(data.action)} (via ${String(data.via)})`;
    case "event.received":
      return `eventId ${String(data.eventId)}`;
    case "human.requested":
      return `${String(data.requestId)} [${(data.options as string[] | undefined)?.join(" | ") ?? ""}]`;
    case "human.answered": {
      const answer = (data.answer ?? {}) as { option?: string; by?: string };
      return `${answer.option ?? ""} by ${answer.by ?? "someone"}`;
    }
    case "child.started":
      return `run ${String(data.childRunId)}`;
    default:
      return "";
  }
}

function describeEntry(entry: JournalEntryView, startedAt: number): string {
  const at = `+${String(entry.at.getTime() - startedAt).padStart(5)}ms`;
  return `   ${String(entry.seq).padStart(3)}  ${at}  epoch ${entry.epoch}  ${entry.kind.padEnd(15)} ${(entry.opKey ?? "").padEnd(26)} ${detail(entry)}`.trimEnd();
}

function printJournal(entries: JournalEntryView[]): void {
  const startedAt = entries[0]?.at.getTime() ?? 0;
  say(dim("   seq      time   lease    kind            op key                     detail"));
  for (const entry of entries) say(describeEntry(entry, startedAt));
}

// ── waiting with deadlines ───────────────────────────────────────────────────

async function until<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Gave up after ${timeoutMs} ms waiting for ${what}.`);
    await new Promise((done) => setTimeout(done, 25));
  }
}

// ── worker processes ─────────────────────────────────────────────────────────

interface WorkerProcess {
  name: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything it wrote, for the error report if something goes wrong. */
  output: string[];
}

const workersStarted: WorkerProcess[] = [];

async function startWorker(name: string, storeUrl: string, ledger: string): Promise<WorkerProcess> {
  const workerId = name.replace(/\s+/g, "-");
  const args = [
    CLI,
    "worker",
    "--store",
    storeUrl,
    "--workflows",
    WORKFLOWS_MODULE,
    "--worker-id",
    workerId,
    "--lease-ms",
    String(LEASE_MS),
    "--poll-ms",
    "50",
  ];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, [LEDGER_ENV]: ledger, [STEP_MS_ENV]: STEP_MS },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.once("exit", (code, signal) => done({ code, signal })));
  const worker: WorkerProcess = { name, child, exited, output };
  workersStarted.push(worker);

  let ready = false;
  const onData = (chunk: Buffer): void => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (line.trim() === "") continue;
      output.push(line);
      if (/\bready\b/i.test(line)) ready = true;
    }
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);

  let exitedEarly = false;
  void exited.then(() => (exitedEarly = true));
  await until(`${name} to print "ready"`, 15_000, async () => {
    if (exitedEarly && !ready) throw new Error(`${name} exited before it was ready.`);
    return ready;
  });
  return worker;
}

function isAlive(worker: WorkerProcess): boolean {
  return worker.child.exitCode === null && worker.child.signalCode === null;
}

// ── the demo ─────────────────────────────────────────────────────────────────

/** The agent's tool steps (`turn#0/0/tool-search_2#0`): which finished, which were running. */
function stepStates(entries: JournalEntryView[]): { completed: string[]; inFlight: string[] } {
  const started = new Set<string>();
  const completed: string[] = [];
  for (const entry of entries) {
    if (entry.opKey === null || !entry.opKey.includes("/tool-")) continue;
    if (entry.kind === "step.started") started.add(entry.opKey);
    if (entry.kind === "step.completed") {
      completed.push(entry.opKey);
      started.delete(entry.opKey);
    }
  }
  return { completed, inFlight: [...started] };
}

function printLedger(ledger: string): Map<string, number> {
  const counts = countLedger(ledger);
  for (const [key, count] of counts) say(`   ${key.padEnd(44)} ran ${count}×`);
  if (counts.size === 0) say("   (empty)");
  return counts;
}

async function main(): Promise<number> {
  for (const file of [CLI, WORKFLOWS_MODULE]) {
    if (!existsSync(file)) {
      say(`Cannot find ${file}. Run the demo from the repository root with \`npm run demo\` (it builds first).`);
      return 1;
    }
  }

  const dir = mkdtempSync(join(tmpdir(), "cairn-demo-"));
  const storeUrl = `sqlite:${join(dir, "demo.db")}`;
  const ledger = join(dir, "effects.log");
  let engine: Engine | undefined;
  try {
    say(bold("Cairn durability demo"));
    say(
      "A research agent's model plans four questions and calls a search tool for all of them in one",
      "turn (the calls run in parallel), drafts a summary, and then asks a person for a review.",
      "Every model call and tool call is journaled in a SQLite file before and after it runs. Each",
      "search also appends its idempotency key to an effect ledger, a plain file outside the",
      "database, so we can count how many times each side effect really happened.",
      dim("(The model here is the scripted stand-in; `npm start` uses a real one when ANTHROPIC_API_KEY or OPENAI_API_KEY is set.)"),
    );

    heading("Start the run");
    engine = await createEngine({ store: storeUrl, workflows });
    await engine.start(research, { topic: "solid-state batteries" }, { runId: RUN_ID });
    say(`   store   ${storeUrl}`, `   ledger  ${ledger}`, `   run     ${RUN_ID} (pending: this process starts runs but executes nothing)`);

    heading("Start worker 1 (a separate process)");
    const first = await startWorker("worker 1", storeUrl, ledger);
    say(`   worker 1 is running as pid ${first.child.pid}; each search takes ${STEP_MS} ms × its position`);
    say(`   the research run starts the agent as a child run, ${AGENT_RUN_ID}`);

    heading("Let it get part-way, then kill it with SIGKILL");
    await until("two finished searches", 30_000, async () => {
      if ((await engine!.getRun(RUN_ID)).waitingFor.some((w) => w.kind === "human")) {
        throw new Error(`The run reached the review before the demo could stop the worker; raise ${STEP_MS_ENV} (now ${STEP_MS}).`);
      }
      const entries = await engine!.journal(AGENT_RUN_ID).catch(() => []);
      return stepStates(entries).completed.length >= 2 && entries;
    });
    first.child.kill("SIGKILL");
    const death = await first.exited;
    const journalAtKill = await engine.journal(AGENT_RUN_ID);
    const killedAt = stepStates(journalAtKill);
    const killedAtSeq = journalAtKill.at(-1)?.seq ?? 0;
    say(`   worker 1 killed (signal ${death.signal ?? "none"}); no shutdown code ran, its lease was not released`);
    say(`   finished before the kill: ${killedAt.completed.join(", ")}`);
    say(`   in flight at the kill:    ${killedAt.inFlight.join(", ") || "(none)"}`);
    say("", `   The agent's journal so far (${AGENT_RUN_ID}):`);
    printJournal(journalAtKill);
    say("", "   The effect ledger so far:");
    printLedger(ledger);

    heading("Start worker 2");
    say(`   The run is still leased to the dead worker; worker 2 may take it once that lease (${LEASE_MS} ms) expires,`);
    say("   with a higher fencing epoch, so nothing worker 1 might still write could be accepted.");
    const second = await startWorker("worker 2", storeUrl, ledger);
    say(`   worker 2 is running as pid ${second.child.pid}`);
    const suspended = await until("the run to ask for its review", 60_000, async () => {
      const run = await engine!.getRun(RUN_ID);
      if (run.status === "failed") throw new Error(`The run failed: ${run.error?.message}`);
      return run.status === "suspended" && run.waitingFor.some((w) => w.kind === "human" && w.requestId === REVIEW_ID) && run;
    });
    const takeover = (await engine.journal(AGENT_RUN_ID)).find((e) => e.kind === "run.claimed" && e.seq > killedAtSeq);
    if (takeover)
      say(`   worker 2 took the run over at seq ${takeover.seq} with lease epoch ${takeover.epoch}; writes fenced by the old epoch would now be refused`);
    say(`   it replayed the journal, finished the remaining searches and the draft, and the research run is now`);
    say(`   ${suspended.status}, waiting for a person to answer "${REVIEW_ID}"`);
    say("   (a suspended run holds no memory in any worker: it is a row with a wait descriptor)");

    heading("Check the ledger: what ran, and how often");
    const counts = printLedger(ledger);
    // A tool's idempotency key is `<runId>:tool:<turn>:<callId>`; its op key is `turn#0/<turn>/tool-<callId>#k`.
    const key = (opKey: string): string => {
      const match = /\/(\d+)\/tool-(.+)#\d+$/.exec(opKey);
      return match ? `${AGENT_RUN_ID}:tool:${match[1]}:${match[2]}` : opKey;
    };
    const rerunFinished = killedAt.completed.filter((op) => (counts.get(key(op)) ?? 0) !== 1);
    say("");
    if (rerunFinished.length > 0) {
      say(`   UNEXPECTED: steps finished before the kill ran again: ${rerunFinished.join(", ")}`);
      return 1;
    }
    say(`   Searches finished before the kill (${killedAt.completed.join(", ")}) ran exactly once: worker 2 replayed`);
    say("   their journaled results instead of calling them again.");
    if (killedAt.inFlight.length > 0) {
      const twice = killedAt.inFlight.filter((op) => (counts.get(key(op)) ?? 0) > 1);
      say(`   Searches in flight at the kill (${killedAt.inFlight.join(", ")}) had a journaled intent but no outcome.`);
      say('   The search tool is declared effect: "idempotent", so worker 2 ran them again with the SAME');
      say("   idempotency key, which a real search API would use to deduplicate.");
      say(`   ${twice.length > 0 ? `Ran twice: ${twice.join(", ")}.` : "None of them had reached its side effect before the kill, so none ran twice."}`);
    }

    heading("Play the reviewer: approve the draft");
    const [request] = await engine.listHumanRequests({ status: "pending", runId: RUN_ID });
    say(`   the question: ${request?.question ?? "(none)"}`, `   its options:  ${request?.options.join(", ") ?? ""}`);
    await engine.respondToHuman(REVIEW_ID, { action: "answer", option: "approve", by: "demo" });
    say(`   answered "approve" (from a shell: npx cairn answer ${REVIEW_ID} approve); the agent now writes the report`);
    const result = await engine.result<ResearchResult>(RUN_ID, { timeoutMs: 30_000 });
    say("   result:");
    say(
      ...JSON.stringify(result, null, 2)
        .split("\n")
        .map((line) => `     ${line}`),
    );

    heading("The journals, as timelines");
    say(`   The research run (${RUN_ID}): the agent as a child run, the review, the agent again for the report.`);
    printJournal(await engine.journal(RUN_ID));
    say("", `   The agent's first run (${AGENT_RUN_ID}): model calls and tool calls, each a step.`);
    printJournal(await engine.journal(AGENT_RUN_ID));
    say(dim("   Each claim raises the lease epoch: worker 1's, worker 2's takeover, and a claim after each wait."));

    heading("Stop worker 2 (SIGTERM: drain and exit)");
    second.child.kill("SIGTERM");
    let timer: NodeJS.Timeout | undefined;
    const stopped = await Promise.race([second.exited, new Promise<undefined>((done) => (timer = setTimeout(done, 15_000, undefined)))]);
    clearTimeout(timer);
    if (!stopped) {
      say("   worker 2 did not exit within 15 s of SIGTERM");
      return 1;
    }
    say(`   worker 2 exited (code ${stopped.code ?? "none"})`);

    say("", bold(`Done: result ${result.status}, ${result.sources} sources, the killed worker cost no finished call.`));
    say("Next: `npm start` runs a worker with the examples and a live research run you review yourself.");
    if (process.env.CAIRN_DEMO_KEEP) say(`Kept ${dir}; inspect it with: node ${CLI} show ${RUN_ID} --store ${storeUrl}`);
    return 0;
  } catch (error) {
    say("", `Demo failed: ${error instanceof Error ? error.message : String(error)}`);
    for (const worker of workersStarted) {
      if (worker.output.length > 0) say(`--- output of ${worker.name} ---`, ...worker.output);
    }
    return 1;
  } finally {
    for (const worker of workersStarted) if (isAlive(worker)) worker.child.kill("SIGKILL");
    await engine?.close();
    if (!process.env.CAIRN_DEMO_KEEP) rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
