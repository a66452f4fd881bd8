import { RUN_STATUSES } from "../../core/run.js";
import type { Engine } from "../../engine/engine.js";
import type { HumanRequestStore, RunStore } from "../../core/store.js";

/** What the gauges read from the store itself: run counts and the oldest pending human request. */
export type MetricsStore = Pick<RunStore, "countRuns"> & Pick<HumanRequestStore, "listHumanRequests">;

/**
 * Tags shown as metric labels: only these keys and values (`{ tier: ["free", "pro"] }`), so the
 * series stay bounded whatever values runs carry. Each pair is one grouped count per scrape.
 */
export type MetricsTagLabels = Record<string, readonly string[]>;

/** The most tag key/value pairs {@link MetricsTagLabels} may name. */
export const MAX_METRICS_TAG_PAIRS = 50;
import type { EngineEvent } from "../../engine/observer.js";
import { Counter, Gauge, Histogram, renderMetrics } from "./prometheus.js";

/** Step latency buckets, seconds: from a fast local call to a long tool run. */
const STEP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];
/** Human-input wait buckets, seconds: from a minute to a week. */
const HUMAN_BUCKETS = [10, 60, 300, 900, 3600, 4 * 3600, 12 * 3600, 86_400, 3 * 86_400, 7 * 86_400];

/**
 * Prometheus metrics of one engine. Counters and histograms are fed by the engine's events
 * (`engine.observe`), so they count what this process's workers and API did since it started;
 * gauges (runs by status, live workers) are read from the store at each scrape, so they cover
 * every process sharing the store.
 */
export class EngineMetrics {
  private readonly runs = new Gauge("cairn_runs", "Runs in the store by workflow and status.");
  private readonly workers = new Gauge("cairn_workers", "Workers that heartbeated within the last minute (all processes sharing the store).");
  private readonly oldestQuestion = new Gauge(
    "cairn_human_oldest_pending_seconds",
    "Age of the oldest unanswered human request in the store (0 when none), whichever process asked it.",
  );
  private readonly steps = new Counter(
    "cairn_steps_total",
    "Step attempts that ended in this process, by workflow and outcome (completed, failed, retry). rate() of it is steps per second.",
  );
  private readonly retries = new Counter("cairn_step_retries_total", "Step attempts that failed and were retried, by workflow.");
  private readonly stepSeconds = new Histogram(
    "cairn_step_duration_seconds",
    "Time from a step attempt's durable intent to its durable outcome, by workflow and outcome.",
    STEP_BUCKETS,
  );
  private readonly humanWait = new Histogram(
    "cairn_human_wait_seconds",
    "Time from a human request to its answer, by workflow, for answers given through this process (see cairn_human_oldest_pending_seconds for the store-wide view). _sum is the people's time per workflow.",
    HUMAN_BUCKETS,
  );
  private readonly spend = new Counter(
    "cairn_budget_spend_usd_total",
    "Model spend in US dollars by workflow: the costMicros of step results journaled by this process's workers (agent model calls).",
  );
  private readonly leaseLosses = new Counter(
    "cairn_lease_losses_total",
    "Runs whose lease a worker of this process lost (it abandoned the execution), by workflow.",
  );
  private readonly workerSeconds = new Counter(
    "cairn_worker_seconds_total",
    "Time this process's workers held runs (from taking a run to giving it back, suspending or ending it), by workflow: compute spent per workflow.",
  );
  private readonly journalEntries = new Counter("cairn_journal_entries_total", "Journal entries this process's workers committed, by workflow.");
  // Journal bytes as a counter fed by commits, not a gauge read from the store: a store-wide figure
  // would be SUM(length(payload)) over every journal row at each scrape (a full scan on SQLite and
  // PostgreSQL, growing with every run); this costs one add per commit and nothing at scrape, and its
  // only label is the workflow, bounded like the other counters. Per-run bytes: GET /runs/:id/costs.
  private readonly journalBytes = new Counter(
    "cairn_journal_bytes_total",
    "UTF-8 bytes of the encoded payloads of the journal entries this process's workers committed, by workflow (before blob offload and encryption): journal storage per workflow.",
  );
  private readonly toolCalls = new Counter(
    "cairn_tool_calls_total",
    "Agent tool calls that ended in this process, by workflow, tool and outcome (completed, failed, retry). Tool names are declared in code, so the label is bounded.",
  );
  private readonly unsubscribe: () => void;

  private readonly runsByTag = new Gauge(
    "cairn_runs_by_tag",
    "Runs in the store by status, for the tag keys and values the server was told to label (serve({ metricsTags })): a bounded set.",
  );
  private readonly tagPairs: { key: string; value: string }[];

  constructor(
    private readonly engine: Engine,
    private readonly store: MetricsStore,
    tagLabels: MetricsTagLabels = {},
  ) {
    this.tagPairs = Object.entries(tagLabels).flatMap(([key, values]) => values.map((value) => ({ key, value })));
    if (this.tagPairs.length > MAX_METRICS_TAG_PAIRS)
      throw new RangeError(`metricsTags names ${this.tagPairs.length} tag values; at most ${MAX_METRICS_TAG_PAIRS}, so the metrics stay bounded.`);
    this.unsubscribe = engine.observe((event) => this.record(event));
  }

  /** The exposition for a scrape: reads the gauges from the store. */
  async render(): Promise<string> {
    const [counts, workers, [oldest], tagged] = await Promise.all([
      // System runs (alert runs) are left out: the gauges are about the users' runs.
      this.store.countRuns({ excludeSystem: true }),
      this.engine.listWorkers(),
      // One index seek (status, created_at): the oldest pending request, asked by whichever process.
      this.store.listHumanRequests({ status: "pending", limit: 1 }),
      Promise.all(this.tagPairs.map(({ key, value }) => this.store.countRuns({ tags: { [key]: value }, excludeSystem: true }))),
    ]);
    this.runsByTag.reset(
      this.tagPairs.flatMap(({ key, value }, i) =>
        RUN_STATUSES.map((status) => ({
          labels: { tag: key, value, status },
          value: tagged[i]!.reduce((sum, row) => sum + (row.status === status ? row.count : 0), 0),
        })),
      ),
    );
    const byWorkflow = new Map<string, Map<string, number>>();
    for (const { workflow, status, count } of counts) {
      let statuses = byWorkflow.get(workflow);
      if (!statuses) byWorkflow.set(workflow, (statuses = new Map()));
      statuses.set(status, count);
    }
    // Every status of every workflow present, zeros included, so series do not appear and vanish.
    this.runs.reset(
      [...byWorkflow].flatMap(([workflow, statuses]) => RUN_STATUSES.map((status) => ({ labels: { workflow, status }, value: statuses.get(status) ?? 0 }))),
    );
    this.workers.reset([{ labels: {}, value: workers.length }]);
    this.oldestQuestion.reset([{ labels: {}, value: oldest ? Math.max(0, Date.now() - oldest.createdAt) / 1000 : 0 }]);
    return renderMetrics([
      this.runs,
      this.runsByTag,
      this.workers,
      this.oldestQuestion,
      this.steps,
      this.retries,
      this.stepSeconds,
      this.humanWait,
      this.spend,
      this.leaseLosses,
      this.workerSeconds,
      this.journalEntries,
      this.journalBytes,
      this.toolCalls,
    ]);
  }

  /** Stops counting. */
  close(): void {
    this.unsubscribe();
  }

  private record(event: EngineEvent): void {
    switch (event.type) {
      case "step": {
        const workflow = event.workflow;
        this.steps.inc({ workflow, outcome: event.outcome });
        if (event.outcome === "retry") this.retries.inc({ workflow });
        if (event.durationMs !== null) this.stepSeconds.observe({ workflow, outcome: event.outcome }, event.durationMs / 1000);
        const cost = costMicrosOf(event.result);
        if (cost > 0) this.spend.inc({ workflow }, cost / 1e6);
        if (event.tool !== undefined) this.toolCalls.inc({ workflow, tool: event.tool, outcome: event.outcome });
        return;
      }
      case "execution-ended":
        this.workerSeconds.inc({ workflow: event.workflow }, event.durationMs / 1000);
        return;
      case "committed":
        this.journalEntries.inc({ workflow: event.workflow }, event.entries);
        this.journalBytes.inc({ workflow: event.workflow }, event.bytes);
        return;
      case "lease-lost":
        this.leaseLosses.inc({ workflow: event.workflow });
        return;
      case "human-answered":
        this.humanWait.observe({ workflow: event.workflow }, event.waitMs / 1000);
        return;
    }
  }
}

/** The `costMicros` an agent's model step journals with its result, or 0. */
function costMicrosOf(result: unknown): number {
  if (typeof result !== "object" || result === null) return 0;
  const cost = (result as { costMicros?: unknown }).costMicros;
  return typeof cost === "number" && Number.isFinite(cost) && cost > 0 ? cost : 0;
}
