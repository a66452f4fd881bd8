// The stdout report: Markdown tables (so they paste into RESULTS.md as they are).
import { fmt, signed } from "./stats.mjs";

const STORE_NAMES = { memory: "memory (reference)", sqlite: "SQLite", postgres: "PostgreSQL", restate: "restate-server (its own log)", "workflow-devkit": "Workflow DevKit local world (JSON files)" };

export function renderTables(report) {
  const { machine, settings, results } = report;
  const lines = [];
  lines.push(`Cairn bench — ${report.generatedAt} — ${settings.reps} repetitions per figure (median, with min–max)${settings.quick ? ", QUICK" : ""}`);
  lines.push(
    `machine: ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGiB} GiB, ${machine.os}; Node ${machine.node}; SQLite ${machine.sqlite} (better-sqlite3 ${machine.betterSqlite3})` +
      (machine.postgres ? `; PostgreSQL ${machine.postgres}, ${machine.pgClient}` : ""),
  );
  if (machine.cairnCommit) lines.push(`cairn: ${machine.cairnCommit}`);
  const peers = Object.entries(machine.peers ?? {}).filter(([, v]) => v);
  if (peers.length) lines.push(`peers: ${peers.map(([name, v]) => `${name} ${v}`).join(", ")}`);
  const loads = results.map((r) => r.loadAverage).filter((x) => x !== undefined);
  if (loads.length) lines.push(`1-minute load average: ${fmt(machine.loadAverageBefore, 2)} before the run; ${fmt(Math.min(...loads), 2)}–${fmt(Math.max(...loads), 2)} as cases began (the bench itself adds about 1)`);
  for (const [store, reason] of Object.entries(report.skipped ?? {})) lines.push(`skipped ${store}: ${reason}`);
  lines.push("");

  const failed = results.filter((r) => r.error);
  const ok = results.filter((r) => !r.error);
  const range = (s, d) => (s ? `${fmt(s.min, d)}–${fmt(s.max, d)}` : "–");

  const ceilings = ok.filter((r) => r.group === "ceiling");
  if (ceilings.length) {
    lines.push("### 1. Commit ceiling", "");
    lines.push("| store | measure | median | min–max |", "| --- | --- | ---: | ---: |");
    for (const r of ceilings) lines.push(`| ${STORE_NAMES[r.store]} | ${r.what} | ${fmt(r.metrics.perSec.median)} | ${range(r.metrics.perSec)} |`);
    lines.push("");
  }

  const throughput = ok.filter((r) => r.group === "throughput");
  if (throughput.length) {
    lines.push("### 2. Throughput: 10-step workflows of trivial steps", "");
    lines.push(
      "| store | concurrent runs | worker | steps/s | min–max | workflows/s | ceiling probe, commits/s | steps/s ÷ ceiling | store commits per step | commit txn p50 / p90 / p99 ms | SQL statements per step | note |",
      "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    );
    for (const r of throughput) {
      const m = r.metrics;
      const notes = [];
      if (m.latencyP50Ms) notes.push(`start→result p50 ${fmt(m.latencyP50Ms.median, 2)} ms`);
      if (m.startPhaseMs && r.store !== "postgres") notes.push(`creating the runs took ${fmt(m.startPhaseMs.median, 0)} ms of ${fmt((r.runsPerRep / m.workflowsPerSec.median) * 1000, 0)}`);
      if (r.ratioToCeiling32 !== undefined) notes.push(`÷ 32-connection ceiling ${fmt(r.ratioToCeiling32, 2)}`);
      if (r.ratioToProbe === undefined && m.ratioToProbe) notes.push(`a step costs ${fmt(1 / m.ratioToProbe.median, 2)} single-row commits`);
      if (m.engineCpuUsPerStep || m.serverCpuUsPerStep) {
        const parts = [m.engineCpuUsPerStep ? `engine ${fmt(m.engineCpuUsPerStep.median, 0)}` : null, m.serverCpuUsPerStep ? `PostgreSQL server ${fmt(m.serverCpuUsPerStep.median, 0)}` : null];
        notes.push(`CPU µs per step: ${parts.filter(Boolean).join(", ")}`);
      }
      if (r.loadAverageAfter !== undefined) notes.push(`load ${fmt(r.loadAverage, 1)} → ${fmt(r.loadAverageAfter, 1)}${r.attempts ? ` (best of ${r.attempts} attempts)` : ""}`);
      notes.push(`${r.runsPerRep} runs/rep`);
      const calls = r.storeCallsPerWorkflow ?? r.workerProcesses?.storeCallsPerWorkflow;
      const commits = calls ? fmt(calls.commit / 10, 2) : "–";
      // Across processes: the parent's statements (starting runs, waiting for results) plus the workers'.
      const sqlPerWorkflow = r.workerProcesses ? (r.workerProcesses.sqlPerWorkflow ?? NaN) + (m.sqlPerWorkflow?.median ?? 0) : m.sqlPerWorkflow?.median;
      const sql = sqlPerWorkflow === undefined || Number.isNaN(sqlPerWorkflow) ? "–" : fmt(sqlPerWorkflow / 10, 1);
      const commitMs = m.commitP50Ms ? [m.commitP50Ms, m.commitP90Ms, m.commitP99Ms].map((q) => (q ? fmt(q.median, 2) : "–")).join(" / ") : r.workerProcesses ? r.workerProcesses.commitP50Ms.map((x) => fmt(x, 1)).join(" / ") : "–";
      lines.push(
        `| ${STORE_NAMES[r.store]} | ${r.concurrency === 1 ? "1 (sequential)" : r.concurrency} | ${r.where} | ${fmt(m.stepsPerSec.median)} | ${range(m.stepsPerSec, 0)} | ${fmt(m.workflowsPerSec.median)} | ${m.ceilingProbe ? fmt(m.ceilingProbe.median) : "–"} | ${m.ratioToProbe ? fmt(m.ratioToProbe.median, 2) : "–"} | ${commits} | ${commitMs} | ${sql} | ${notes.join("; ")} |`,
      );
    }
    lines.push("");
  }

  const peerRows = ok.filter((r) => r.group === "peers");
  if (peerRows.length) {
    lines.push("### 3. Peers on the same work: 10-step workflows (DBOS, Restate, Workflow DevKit) and 10-node graphs (LangGraph.js), Cairn's figure from section 2", "");
    lines.push(
      "| peer | storage | concurrent | peer steps or nodes/s | min–max | workflows or graphs/s | Cairn steps/s, same run | Cairn ÷ peer | peer SQL statements per step or node | note |",
      "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    );
    for (const r of peerRows) {
      const m = r.metrics;
      const storage =
        r.peer === "DBOS Transact"
          ? "PostgreSQL (system database)"
          : r.peer === "Restate"
            ? restateStorage(r)
            : r.peer === "Workflow DevKit"
              ? wdkStorage(r)
              : r.checkpointer === "postgres"
              ? "PostgresSaver"
              : `SqliteSaver, synchronous=${r.synchronous ?? (r.checkpointer === "sqlite-full" ? "FULL" : "?")}`;
      const notes = [];
      if (r.server) notes.push(r.server);
      if (r.versions?.workflow) notes.push(`workflow ${r.versions.workflow} (@workflow/core ${r.versions["@workflow/core"]}, world-local ${r.versions["@workflow/world-local"]}), queue ${r.transport === "http" ? "over HTTP on 127.0.0.1" : "in process"}, build ${fmt(r.buildMs / 1000, 1)} s`);
      if (r.cpuPerStepUs?.process !== undefined) notes.push(`CPU per step (warm-up included): ${fmt(r.cpuPerStepUs.process, 0)} µs (one process: runtime, world and driver)`);
      else if (r.cpuPerStepUs) notes.push(`CPU per step (warm-up included): server ${r.cpuPerStepUs.server === null ? "?" : fmt(r.cpuPerStepUs.server, 0)} µs + SDK process ${fmt(r.cpuPerStepUs.sdkProcess, 0)} µs`);
      if (m.peerCpuUsPerStep && r.cpuPerStepUs?.process === undefined) notes.push(`CPU µs per step: peer process ${fmt(m.peerCpuUsPerStep.median, 0)}${m.serverCpuUsPerStep ? `, PostgreSQL server ${fmt(m.serverCpuUsPerStep.median, 0)}` : ""}`);
      if (r.checkpointsPerGraph !== undefined) notes.push(`${fmt(r.checkpointsPerGraph, 0)} checkpoints + ${fmt(r.putWritesPerGraph, 0)} write sets per graph`);
      if (r.poolMax) notes.push(`pool max ${r.poolMax}`);
      notes.push(`${r.runsPerRep} per rep`);
      lines.push(
        `| ${r.peer} | ${storage} | ${r.concurrency === 1 ? "1 (sequential)" : r.concurrency} | ${fmt(m.stepsPerSec.median)} | ${range(m.stepsPerSec, 0)} | ${fmt(m.workflowsPerSec.median)} | ${cairnFigure(r)} | ${cairnRatio(r)} | ${m.sqlPerStep ? fmt(m.sqlPerStep.median, 1) : "–"} | ${notes.join("; ")} |`,
      );
    }
    lines.push("");
  }

  const overhead = ok.filter((r) => r.group === "overhead");
  if (overhead.length) {
    lines.push("### 4. Per-step overhead: time from one no-op step's function to the next, one sequential run", "");
    lines.push(
      "| store | p50 ms | p50 min–max | p99 ms | mean ms | p50 in single-row commit times | store commits per step | commit txn p50 / p90 / p99 ms | SQL statements per step | steps/run |",
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    );
    for (const r of overhead) {
      const m = r.metrics;
      lines.push(
        `| ${STORE_NAMES[r.store]} | ${fmt(m.p50Ms.median, 3)} | ${range(m.p50Ms, 3)} | ${fmt(m.p99Ms.median, 3)} | ${fmt(m.meanMs.median, 3)} | ${m.p50InCommits ? fmt(m.p50InCommits.median, 2) : "–"} | ${fmt(r.commitsPerStep, 2)} | ${m.commitP50Ms ? fmt(m.commitP50Ms.median, 3) : "–"} | ${m.sqlPerStep ? fmt(m.sqlPerStep.median, 1) : "–"} | ${r.stepsPerRep} |`,
      );
    }
    lines.push("");
  }

  const resume = ok.filter((r) => r.group === "resume" && !r.loop);
  if (resume.length) {
    lines.push("### 5. Resume: recovering a run SIGKILLed after 1,000 journaled steps, with the next step in flight", "");
    lines.push(
      "| who | store | claim → in-flight step running again, ms | min–max | claim → run completed, ms | replay (workflow code restart → step), ms | new process: engine/launch → step, ms | journal reads (entries), ms | note |",
      "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    );
    for (const r of resume) {
      const m = r.metrics;
      if (r.who === "Cairn") {
        const d = r.details?.[0];
        const reads = d ? `${d.journalReads.length} (${d.journalReads.map((x) => x.entries).join(", ")}), ${fmt(m.journalReadMs.median, 1)}` : "–";
        const calls = d ? Object.entries(d.storeCallsClaimToStep).filter(([, n]) => n > 0).map(([k, n]) => `${n} ${k}`).join(", ") + (d.sqlClaimToStep !== null && d.sqlClaimToStep !== undefined ? ` (${d.sqlClaimToStep} SQL statements)` : "") : "";
        lines.push(
          `| Cairn | ${STORE_NAMES[r.store]} | ${fmt(m.claimToStepMs.median, 1)} | ${range(m.claimToStepMs, 1)} | ${fmt(m.claimToDoneMs.median, 1)} | ${fmt(m.replayMs.median, 1)} | ${fmt(m.engineToStepMs.median, 0)} | ${reads} | store calls claim → step: ${calls}; ${d?.entriesAtCrash ?? "?"} entries at the crash; ${m.claimToStepMs.samples.length} reps |`,
        );
      } else if (r.who === "Restate") {
        const vs = (r.cairn ?? []).map((c) => `${STORE_NAMES[c.id.split(".")[0]]} ${fmt(c.peerOverCairn, 1)}× / ${fmt(c.replayPeerOverCairn, 1)}×`).join(", ");
        lines.push(
          `| Restate | ${restateStorage(r)} | ${fmt(m.attemptToStepMs.median, 1)} (attempt arrived → step) | ${range(m.attemptToStepMs, 1)} | ${fmt(m.attemptToDoneMs.median, 1)} | ${fmt(m.replayMs.median, 1)} | ${fmt(m.processToStepMs.median, 0)} | – | SIGKILL → step ${fmt(m.killToStepMs.median, 0)} ms (the server retries after ${r.durability?.retryInitialInterval ?? "?"}, doubling); the new process listened ${fmt(m.listeningToAttemptMs.median, 0)} ms before the attempt arrived${vs ? `; attempt → step and replay ÷ Cairn's claim → step and replay: ${vs}` : ""}; ${m.attemptToStepMs.samples.length} reps |`,
        );
      } else {
        lines.push(
          `| ${r.who} | ${STORE_NAMES[r.store]} | – (no claim: recovery at launch) | ${range(m.launchToStepMs, 0)} (launch → step) | – | ${fmt(m.replayMs.median, 0)} | ${fmt(m.launchToStepMs.median, 0)} | – | launch() ${fmt(m.launchMs.median, 0)} ms, then ${fmt(m.launchToReplayMs.median, 0)} ms until the recovered workflow restarted; ${m.replaySql ? fmt(m.replaySql.median, 0) : "?"} SQL statements during the replay${r.peerOverCairn ? `; launch → step is ${fmt(r.peerOverCairn, 0)}× Cairn's engine → step, its replay ${fmt(r.replayPeerOverCairn, 0)}× Cairn's` : ""}; ${m.launchToStepMs.samples.length} reps |`,
        );
      }
    }
    lines.push("");
  }

  const loops = ok.filter((r) => r.group === "resume" && r.loop);
  if (loops.length) {
    lines.push(`### 5b. Resume of a loop run: recovering a run SIGKILLed in a ctx.loop after N journaled iterations (one step each, a snapshot every ${loops[0].snapshotEvery}), with the next step in flight`, "");
    lines.push(
      "| store | iterations | journal entries at the crash | claim → in-flight step running again, ms | min–max | ÷ the shortest run's | replay (workflow code restart → step), ms | journal read: entries, ms | claim → run completed, ms | crashed run built in, s | note |",
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    );
    for (const r of loops) {
      const m = (name, n) => r.metrics[`${name}@${n}`];
      const shortest = m("claimToStepMs", Math.min(...r.sizes))?.median;
      for (const n of r.sizes) {
        const d = r.details?.[n]?.[0];
        const reads = d ? `${d.journalReads.map((x) => `${x.entries}${x.method === "readJournal" ? " (readJournal)" : ""}`).join(" + ") || "none"}, ${fmt(m("journalReadMs", n).median, 2)}` : "–";
        const calls = d ? Object.entries(d.storeCallsClaimToStep).filter(([, k]) => k > 0).map(([k, c]) => `${c} ${k}`).join(", ") + (d.sqlClaimToStep !== null && d.sqlClaimToStep !== undefined ? ` (${d.sqlClaimToStep} SQL statements)` : "") : "";
        const notes = [`store calls claim → step: ${calls}`, `new process: engine → step ${fmt(m("engineToStepMs", n).median, 0)} ms (createEngine ${fmt(m("engineOpenMs", n)?.median, 0)} ms, then ${fmt(m("engineReadyToClaimMs", n)?.median, 0)} ms to the claim, whose query took ${fmt(m("claimQueryMs", n)?.median, 1)} ms)`, `${m("claimToStepMs", n).samples.length} reps`];
        lines.push(
          `| ${STORE_NAMES[r.store]} | ${fmt(n, 0)} | ${fmt(d?.entriesAtCrash, 0)} | ${fmt(m("claimToStepMs", n).median, 1)} | ${range(m("claimToStepMs", n), 1)} | ${fmt(m("claimToStepMs", n).median / shortest, 2)}× | ${fmt(m("replayMs", n).median, 1)} | ${reads} | ${fmt(m("claimToDoneMs", n).median, 1)} | ${fmt(m("buildMs", n).median / 1000, 2)} | ${notes.join("; ")} |`,
        );
      }
    }
    const checks = loops.filter((r) => r.validation).map((r) => `${STORE_NAMES[r.store]}: ${r.validation.entries} entries identical`);
    if (checks.length) lines.push("", `Crashed runs are written through the store; each case first compared a built ${loops[0].validation?.iterations}-iteration run with a live one crashed the same way (${checks.join("; ")}).`);
    lines.push("");
  }

  const wakeup = ok.filter((r) => r.group === "wakeup");
  if (wakeup.length) {
    lines.push("### 6. Wake-up latency: sendEvent → the waiting run's next step function running", "");
    lines.push("| store | worker | p50 ms | p50 min–max | p99 ms | mean ms | max ms | wake-ups per rep |", "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (const r of wakeup) {
      const m = r.metrics;
      lines.push(`| ${STORE_NAMES[r.store]} | ${r.where} | ${fmt(m.p50Ms.median, 2)} | ${range(m.p50Ms, 2)} | ${fmt(m.p99Ms.median, 2)} | ${fmt(m.meanMs.median, 2)} | ${fmt(m.maxMs.median, 2)} | ${r.samplesPerRep} |`);
    }
    lines.push("");
  }

  const suspended = ok.filter((r) => r.group === "suspended");
  if (suspended.length) {
    lines.push("### 7. Suspended-run cost: an idle worker process's memory after GC, with 0 and with 100,000 suspended runs in the store", "");
    lines.push(
      "| store | suspended runs | RSS MB, empty store | RSS MB, with them | RSS Δ MB | RSS Δ, reps | heap Δ MB | idle claim query p50 ms, empty → with them | worker that suspended runs itself: RSS Δ, heap Δ, heap bytes per run (2nd half) | wake one of them, p50 ms | bulk creation s |",
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: |",
    );
    for (const r of suspended) {
      const m = r.metrics;
      const self = r.selfSuspended;
      lines.push(
        `| ${STORE_NAMES[r.store]} | ${fmt(r.runs, 0)} | ${fmt(m.emptyRssMB.median, 1)} | ${fmt(m.fullRssMB.median, 1)} | ${signed(m.deltaRssMB.median, 1)} | ${signed(m.deltaRssMB.min, 1)} to ${signed(m.deltaRssMB.max, 1)} | ${signed(m.deltaHeapMB.median, 2)} | ${fmt(m.emptyClaimP50Ms.median, 2)} → ${fmt(m.fullClaimP50Ms.median, 2)} | ${self ? `${fmt(self.runs, 0)} runs: ${signed(self.rssDeltaMB, 1)} MB, ${signed(self.heapDeltaMB, 2)} MB, ${signed(self.secondHalfHeapBytesPerRun, 0)} B` : "–"} | ${r.wakeWithAll ? fmt(r.wakeWithAll.p50Ms, 2) : "–"} | ${fmt(r.bulkCreateMs / 1000, 1)} |`,
      );
    }
    lines.push("");
  }

  const storage = ok.filter((r) => r.group === "storage");
  if (storage.length) {
    lines.push("### 8. Storage: bytes per journaled step (after compaction), beyond the step's result", "");
    lines.push(
      "| store | bytes per step, whole store | result (payload) bytes | beyond the payload | journal table only, per step | beyond the payload | journal rows per step | bytes per run (run row and its own entries) | runs × steps |",
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    );
    for (const r of storage) {
      lines.push(
        `| ${STORE_NAMES[r.store]} | ${fmt(r.perStepBytes, 0)} | ${r.payloadBytes} | ${fmt(r.overheadPerStepBytes, 0)} | ${r.journalPerStepBytes === null || Number.isNaN(r.journalPerStepBytes) ? "–" : fmt(r.journalPerStepBytes, 0)} | ${r.journalOverheadPerStepBytes === null || Number.isNaN(r.journalOverheadPerStepBytes) ? "–" : fmt(r.journalOverheadPerStepBytes, 0)} | ${fmt(r.rowsPerStep, 2)} | ${fmt(r.perRunBytes, 0)} | ${r.runs} × ${r.steps} |`,
      );
    }
    lines.push("");
  }

  const targets = targetRows(results);
  if (targets.length) {
    lines.push("### Against issue #4's targets (this run)", "");
    lines.push("| target | measured | verdict |", "| --- | --- | --- |");
    for (const t of targets) lines.push(`| ${t.target} | ${t.measured} | ${t.verdict} |`);
    lines.push("");
  }

  if (failed.length) {
    lines.push("### Failed cases", "");
    for (const r of failed) lines.push(`- ${r.id}: ${r.error.split("\n")[0]}`);
    lines.push("");
  }
  return `${lines.join("\n")}\n`;
}

/** Issue #4's targets, each with what this run measured and whether it is met. */
export function targetRows(results) {
  const get = (id) => results.find((r) => r.id === id && !r.error);
  const rows = [];
  const verdict = (met, by) => (met ? `met (${by})` : `missed (${by})`);
  const ratioRow = (target, cairnId, peerId, want, unit) => {
    const peer = get(peerId);
    const cairn = get(cairnId);
    if (!peer || !cairn || !peer.cairnOverPeer) return;
    const ratio = peer.cairnOverPeer;
    rows.push({
      target,
      measured: `Cairn ${fmt(cairn.metrics.stepsPerSec.median)} steps/s vs ${fmt(peer.metrics.stepsPerSec.median)} ${unit}/s: ${fmt(ratio, 1)}×`,
      verdict: verdict(ratio >= want, ratio >= want ? `${fmt(ratio / want, 2)}× the bar` : `${fmt(ratio, 1)}× of ${want}×, short by ${fmt(want / ratio, 2)}×`),
    });
  };
  ratioRow("PostgreSQL: ≥ 10× DBOS Transact's steps/s at concurrency 32", "postgres.throughput.c32", "postgres.peers.dbos.c32", 10, "steps");
  ratioRow("PostgreSQL: ≥ 8× DBOS Transact's steps/s sequentially", "postgres.throughput.c1", "postgres.peers.dbos.c1", 8, "steps");
  // Issue 17: PostgreSQL at its commit ceiling, and a sequential step at the cost of one commit.
  const pg32 = get("postgres.throughput.c32");
  if (pg32?.ratioToCeiling32 !== undefined) {
    const ratio = pg32.ratioToCeiling32;
    rows.push({
      target: "PostgreSQL: 32 concurrent runs ≥ 0.6 of the 32-connection commit ceiling",
      measured: `${fmt(pg32.metrics.stepsPerSec.median)} steps/s = ${fmt(ratio, 2)} of ${fmt(get("postgres.ceiling.conn32")?.metrics.perSec.median)} commits/s`,
      verdict: verdict(ratio >= 0.6, ratio >= 0.6 ? `${fmt(ratio / 0.6, 2)}× the bar` : `short by ${fmt(0.6 / ratio, 2)}×`),
    });
  }
  for (const store of ["sqlite", "postgres"]) {
    const r = get(`${store}.throughput.c1`);
    if (!r?.metrics.ratioToProbe) continue;
    const cost = 1 / r.metrics.ratioToProbe.median;
    rows.push({
      target: `${STORE_NAMES[store]}: a sequential step costs ≤ 1.2 single-row commit times`,
      measured: `${fmt(r.metrics.stepsPerSec.median)} steps/s vs the probe's ${fmt(r.metrics.ceilingProbe.median)} commits/s: ${fmt(cost, 2)} commit times per step`,
      verdict: verdict(cost <= 1.2, cost <= 1.2 ? `${fmt(1.2 / cost, 2)}× under the bar` : `over by ${fmt(cost / 1.2, 2)}×`),
    });
    if (r.ratioToCeilingCase !== undefined) {
      const ratio = r.ratioToCeilingCase;
      rows.push({
        target: `${STORE_NAMES[store]}: sequential steps/s ≥ 0.6 of the single-row ceiling case`,
        measured: `${fmt(ratio, 2)} of the ceiling case`,
        verdict: verdict(ratio >= 0.6, ratio >= 0.6 ? `${fmt(ratio / 0.6, 2)}× the bar` : `short by ${fmt(0.6 / ratio, 2)}×`),
      });
    }
  }
  ratioRow("≥ 5× LangGraph.js (SQLite checkpointer, synchronous=FULL) node executions/s, sequential", "sqlite.throughput.c1", "sqlite.peers.langgraph-sqlite-full.c1", 5, "nodes");
  ratioRow("≥ 10× LangGraph.js (SQLite checkpointer, synchronous=FULL) node executions/s, 32 concurrent", "sqlite.throughput.c32", "sqlite.peers.langgraph-sqlite-full.c32", 10, "nodes");
  // Restate (issue: stronger peers): Cairn ≥ 2× at equal or stronger durability (both fsync each acknowledged step).
  for (const concurrency of [1, 32]) {
    const peer = get(`restate.peers.restate.c${concurrency}`);
    for (const c of peer?.cairnByCase ?? []) {
      rows.push({
        target: `${STORE_NAMES[c.store]}: ≥ 2× Restate's steps/s, ${concurrency === 1 ? "sequential" : `${concurrency} concurrent`}`,
        measured: `Cairn ${fmt(c.stepsPerSec)} steps/s vs ${fmt(peer.metrics.stepsPerSec.median)} steps/s: ${fmt(c.cairnOverPeer, 1)}×`,
        verdict: verdict(c.cairnOverPeer >= 2, c.cairnOverPeer >= 2 ? `${fmt(c.cairnOverPeer / 2, 2)}× the bar` : c.cairnOverPeer < 1 ? `Restate wins, ${fmt(1 / c.cairnOverPeer, 2)}× Cairn` : `short by ${fmt(2 / c.cairnOverPeer, 2)}×`),
      });
    }
  }
  // Vercel's Workflow DevKit (issue: stronger peers): Cairn ≥ 2× at equal or stronger durability (Cairn
  // fsyncs each commit; the DevKit's local world never fsyncs, so Cairn's durability is the stronger).
  for (const concurrency of [1, 32]) {
    const peer = get(`workflow-devkit.peers.local-world.c${concurrency}`);
    for (const c of peer?.cairnByCase ?? []) {
      rows.push({
        target: `${STORE_NAMES[c.store]}: ≥ 2× the Workflow DevKit's steps/s (local world, no fsync), ${concurrency === 1 ? "sequential" : `${concurrency} concurrent`}`,
        measured: `Cairn ${fmt(c.stepsPerSec)} steps/s vs ${fmt(peer.metrics.stepsPerSec.median)} steps/s: ${fmt(c.cairnOverPeer, 1)}×`,
        verdict: verdict(c.cairnOverPeer >= 2, c.cairnOverPeer >= 2 ? `${fmt(c.cairnOverPeer / 2, 2)}× the bar` : c.cairnOverPeer < 1 ? `the DevKit wins, ${fmt(1 / c.cairnOverPeer, 2)}× Cairn` : `short by ${fmt(2 / c.cairnOverPeer, 2)}×`),
      });
    }
  }
  const seq = get("sqlite.throughput.c1");
  if (seq?.metrics.ratioToProbe) {
    const ratio = seq.metrics.ratioToProbe.median;
    rows.push({
      target: "SQLite: sequential steps/s ≥ 80% of the single-row commit ceiling",
      measured: `${fmt(seq.metrics.stepsPerSec.median)} steps/s = ${fmt(ratio, 2)} of the probe (${fmt(seq.metrics.ceilingProbe.median)} commits/s)${seq.ratioToCeilingCase ? `, ${fmt(seq.ratioToCeilingCase, 2)} of the ceiling case` : ""}`,
      verdict: verdict(ratio >= 0.8, ratio >= 0.8 ? `${fmt(ratio / 0.8, 2)}× the bar` : `short by ${fmt(0.8 / ratio, 2)}×`),
    });
  }
  const c256 = get("sqlite.throughput.c256");
  if (c256) {
    const v = c256.metrics.stepsPerSec.median;
    rows.push({ target: "SQLite: ≥ 20,000 steps/s at concurrency 256", measured: `${fmt(v)} steps/s`, verdict: verdict(v >= 20_000, v >= 20_000 ? `${fmt(v / 20_000, 2)}× the bar` : `short by ${fmt((1 - v / 20_000) * 100, 0)}%`) });
  }
  ratioRow("≥ 10× LangGraph.js (SQLite checkpointer) node executions/s, sequential", "sqlite.throughput.c1", "sqlite.peers.langgraph-sqlite.c1", 10, "nodes");
  ratioRow("≥ 10× LangGraph.js (SQLite checkpointer) node executions/s, 32 concurrent", "sqlite.throughput.c32", "sqlite.peers.langgraph-sqlite.c32", 10, "nodes");
  for (const store of ["sqlite", "postgres"]) {
    const r = get(`${store}.resume`);
    if (!r) continue;
    const v = r.metrics.claimToStepMs.median;
    rows.push({
      target: `Recovery of a crashed 1,000-step run < 50 ms (${STORE_NAMES[store]})`,
      measured: `claim → in-flight step running again ${fmt(v, 1)} ms (max ${fmt(r.metrics.claimToStepMs.max, 1)}); ${r.details?.[0]?.journalReads.length ?? "?"} journal read`,
      verdict: verdict(v < 50, v < 50 ? `${fmt(50 / v, 1)}× under` : `over by ${fmt(v - 50, 0)} ms`),
    });
  }
  for (const store of ["sqlite", "postgres"]) {
    const r = get(`${store}.resume.loop`);
    if (!r) continue;
    const lo = Math.min(...r.sizes);
    const hi = Math.max(...r.sizes);
    const at = (n) => r.metrics[`claimToStepMs@${n}`];
    const ratio = r.claimToStepRatio;
    rows.push({
      target: `Resume of a ${fmt(hi, 0)}-iteration loop run within 2× the resume of a ${fmt(lo, 0)}-iteration one (${STORE_NAMES[store]})`,
      measured: `claim → in-flight step running again ${fmt(at(hi).median, 1)} ms (max ${fmt(at(hi).max, 1)}) vs ${fmt(at(lo).median, 1)} ms (max ${fmt(at(lo).max, 1)}): ${fmt(ratio, 2)}×; ${r.details?.[hi]?.[0]?.journalReads.map((x) => x.entries).join(" + ") ?? "?"} vs ${r.details?.[lo]?.[0]?.journalReads.map((x) => x.entries).join(" + ") ?? "?"} entries read`,
      verdict: verdict(ratio <= 2, ratio <= 2 ? `${fmt(2 / ratio, 1)}× under the bar` : `over by ${fmt(ratio / 2, 2)}×`),
    });
  }
  for (const [store, bar] of [["postgres", 10], ["sqlite", 5]]) {
    const r = get(`${store}.wakeup`);
    if (!r) continue;
    const v = r.metrics.p50Ms.median;
    rows.push({
      target: `Wake-up p50 < ${bar} ms (${STORE_NAMES[store]}, ${r.where})`,
      measured: `p50 ${fmt(v, 2)} ms, p99 ${fmt(r.metrics.p99Ms.median, 2)} ms`,
      verdict: verdict(v < bar, v < bar ? `${fmt(bar / v, 1)}× under` : `over by ${fmt(v - bar, 1)} ms`),
    });
  }
  for (const store of ["sqlite", "postgres"]) {
    const r = get(`${store}.suspended`);
    if (!r) continue;
    const v = r.metrics.deltaRssMB.median;
    rows.push({
      target: `100,000 suspended runs add < 50 MB to a worker (${STORE_NAMES[store]})`,
      measured: `RSS ${signed(v, 1)} MB (reps ${signed(r.metrics.deltaRssMB.min, 1)} to ${signed(r.metrics.deltaRssMB.max, 1)}), heap ${signed(r.metrics.deltaHeapMB.median, 2)} MB`,
      verdict: verdict(v < 50, v < 50 ? `${fmt(50 - v, 0)} MB under the bar` : `over by ${fmt(v - 50, 0)} MB`),
    });
  }
  return rows;
}

/** A Workflow DevKit row's storage: its local world's files and whether they are fsynced (measured with strace). */
function wdkStorage(r) {
  const d = r.durability;
  if (!d) return "local world";
  return `local world: ${d.storage}, fsync ${d.fsync ? "on" : "NONE (weaker than Cairn's: a step survives a process crash, not an OS crash or power loss)"}`;
}

/** A Restate row's storage: the server's log and whether its WAL is fsynced (read from --dump-config). */
function restateStorage(r) {
  const d = r.durability;
  if (!d) return "restate-server";
  return `restate-server log (${d.logProvider} loglet, replication ${d.replication}; WAL fsync ${d.logServerWalFsync ? "on" : "OFF"})`;
}

/** Cairn's steps/s beside a peer: one figure, or one per store for a peer paired with several (Restate). */
function cairnFigure(r) {
  if (r.cairnByCase?.length) return r.cairnByCase.map((c) => `${STORE_NAMES[c.store]} ${fmt(c.stepsPerSec)}`).join(", ");
  return r.cairnStepsPerSec ? fmt(r.cairnStepsPerSec) : "–";
}

function cairnRatio(r) {
  if (r.cairnByCase?.length) return r.cairnByCase.map((c) => `${fmt(c.cairnOverPeer, 1)}×`).join(", ");
  return r.cairnOverPeer ? `${fmt(r.cairnOverPeer, 1)}×` : "–";
}
