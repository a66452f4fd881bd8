import { Option, type Command } from "commander";
import { createHostingEngine } from "../command-engine.js";
import { idArg, intArg } from "../args.js";
import { defined, note, print, storeOption, type StoreOptions } from "../context.js";
import { deprecationNotice } from "../deprecated.js";
import { untilShutdown } from "../lifecycle.js";
import { describeWorkflows, resolveWorkflows } from "../load-workflows.js";
import { retentionFrom, retentionOptions, type RetentionCommandOptions } from "./retention.js";
import { maxRecoveryOption } from "../load-schedules.js";
import { metricsOptions, startMetrics, type MetricsCommandOptions } from "./worker-metrics.js";

interface WorkerCommandOptions extends StoreOptions, RetentionCommandOptions, MetricsCommandOptions {
  workflows?: string[];
  concurrency?: number;
  leaseMs?: number;
  pollMs?: number;
  workerId?: string;
  retire?: string[];
  /** The deprecated name of `retire`. */
  drain?: string[];
  maxRecoveryAttempts?: number;
}

/** Registers `cairn worker`. */
export function registerWorkerCommand(program: Command): void {
  const worker = program
    .command("worker")
    .description("run workflows: claim runnable runs from the store until stopped (Ctrl-C drains)")
    .option(
      "--workflows <module...>",
      "ES module(s) exporting workflows: `workflows` array, default export, or named workflows (default: the examples); their exported schedules (`schedules` array or named) are saved and fired",
    )
    .option("--concurrency <n>", "runs held at once (default 16)", intArg(1, 10_000))
    .option("--lease-ms <ms>", "lease length in ms (default 30000)", intArg(100))
    .option("--poll-ms <ms>", "idle poll interval in ms (default 200)", intArg(1))
    .option("--worker-id <id>", "this worker's id (default host:pid:random)", idArg("worker id"))
    .option("--retire <version...>", "workflow versions to treat as retired (not to claim runs of), e.g. research@1 (see also cairn retire)")
    .addOption(new Option("--drain <version...>", "deprecated: use --retire").hideHelp());
  storeOption(retentionOptions(metricsOptions(maxRecoveryOption(worker)))).action(runWorker);
}

async function runWorker(options: WorkerCommandOptions): Promise<void> {
  if (options.drain) note(deprecationNotice("cairn worker --drain", "--retire"));
  const retire = options.retire || options.drain ? [...(options.retire ?? []), ...(options.drain ?? [])] : undefined;
  const workflows = await resolveWorkflows(options.workflows);
  const shutdown = untilShutdown("draining: in-flight steps finish and leases are released");
  const retention = retentionFrom(options);
  const engine = await createHostingEngine(options, workflows, retention);
  let metrics: Awaited<ReturnType<typeof startMetrics>>;
  try {
    metrics = await startMetrics(engine, options);
    const worker = engine.startWorker(
      defined({ concurrency: options.concurrency, leaseMs: options.leaseMs, pollInterval: options.pollMs, workerId: options.workerId, retire }),
    );
    print(`cairn worker ${worker.workerId} ready (store ${engine.store.url}, workflows ${describeWorkflows(workflows)})`);
    if (metrics) print(`  metrics: ${metrics.url}/metrics`);
    await shutdown;
    await worker.stop({ drain: true });
  } finally {
    await metrics?.close();
    await engine.close();
  }
}
