// The stdout report: Markdown tables (so they paste into RESULTS.md as they are).
import { fmt } from "./stats.mjs";

const STORE_NAMES = { memory: "memory (reference)", sqlite: "SQLite", postgres: "PostgreSQL" };

export function renderTables(report) {
  const { machine, settings, results } = report;
  const lines = [];
  lines.push(`Cairn bench — ${report.generatedAt} — ${settings.reps} repetitions per figure (median, with min–max)${settings.quick ? ", QUICK" : ""}`);
  lines.push(
    `machine: ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGiB} GiB, ${machine.os}; Node ${machine.node}; SQLite ${machine.sqlite} (better-sqlite3 ${machine.betterSqlite3})` +
      (machine.postgres ? `; PostgreSQL ${machine.postgres}, ${machine.pgClient}` : ""),
  );
  if (machine.cairnCommit) lines.push(`cairn: ${machine.cairnCommit}`);
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
      "| store | concurrent runs | worker | steps/s | min–max | workflows/s | ceiling probe, commits/s | steps/s ÷ ceiling | store commits per step | commit txn p50 ms | SQL statements per step | note |",
      "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    );
    for (const r of throughput) {
      const m = r.metrics;
      const notes = [];
      if (m.latencyP50Ms) notes.push(`start→result p50 ${fmt(m.latencyP50Ms.median, 2)} ms`);
      if (m.startPhaseMs && r.store !== "postgres") notes.push(`creating the runs took ${fmt(m.startPhaseMs.median, 0)} ms of ${fmt((r.runsPerRep / m.workflowsPerSec.median) * 1000, 0)}`);
      if (r.ratioToCeiling32 !== undefined) notes.push(`÷ 32-connection ceiling ${fmt(r.ratioToCeiling32, 2)}`);
      notes.push(`${r.runsPerRep} runs/rep`);
      const calls = r.storeCallsPerWorkflow ?? r.workerProcesses?.storeCallsPerWorkflow;
      const commits = calls ? fmt(calls.commit / 10, 2) : "–";
      // Across processes: the parent's statements (starting runs, waiting for results) plus the workers'.
      const sqlPerWorkflow = r.workerProcesses ? (r.workerProcesses.sqlPerWorkflow ?? NaN) + (m.sqlPerWorkflow?.median ?? 0) : m.sqlPerWorkflow?.median;
      const sql = sqlPerWorkflow === undefined || Number.isNaN(sqlPerWorkflow) ? "–" : fmt(sqlPerWorkflow / 10, 1);
      const commitMs = m.commitP50Ms ? fmt(m.commitP50Ms.median, 2) : r.workerProcesses ? r.workerProcesses.commitP50Ms.map((x) => fmt(x, 1)).join(" / ") : "–";
      lines.push(
        `| ${STORE_NAMES[r.store]} | ${r.concurrency === 1 ? "1 (sequential)" : r.concurrency} | ${r.where} | ${fmt(m.stepsPerSec.median)} | ${range(m.stepsPerSec, 0)} | ${fmt(m.workflowsPerSec.median)} | ${m.ceilingProbe ? fmt(m.ceilingProbe.median) : "–"} | ${m.ratioToProbe ? fmt(m.ratioToProbe.median, 2) : "–"} | ${commits} | ${commitMs} | ${sql} | ${notes.join("; ")} |`,
      );
    }
    lines.push("");
  }

  const overhead = ok.filter((r) => r.group === "overhead");
  if (overhead.length) {
    lines.push("### 3. Per-step overhead: time from one no-op step's function to the next, one sequential run", "");
    lines.push(
      "| store | p50 ms | p50 min–max | p99 ms | mean ms | p50 in single-row commit times | store commits per step | commit txn p50 ms | SQL statements per step | steps/run |",
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

  if (failed.length) {
    lines.push("### Failed cases", "");
    for (const r of failed) lines.push(`- ${r.id}: ${r.error.split("\n")[0]}`);
    lines.push("");
  }
  return `${lines.join("\n")}\n`;
}
