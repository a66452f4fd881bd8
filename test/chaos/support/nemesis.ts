import type { ChaosWorker, Cluster } from "./cluster.js";
import type { Rng } from "./rng.js";

/** One kind of fault: `run` injects it and returns a description for the log. */
export interface Fault {
  name: string;
  weight: number;
  run(rng: Rng): Promise<string | null>;
}

/**
 * Injects a seeded random fault every `minGapMs`..`maxGapMs` until stopped. The schedule (which
 * fault, which target, how long) is drawn from the seed; process timing is the only other input.
 */
export class Nemesis {
  readonly log: string[] = [];
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;
  private wake: (() => void) | null = null;
  private readonly loopDone: Promise<void>;
  private readonly started = Date.now();

  constructor(
    private readonly rng: Rng,
    private readonly faults: Fault[],
    private readonly gap: { minMs: number; maxMs: number },
  ) {
    this.loopDone = this.loop();
  }

  /** Counts of each fault injected so far. */
  counts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const line of this.log) {
      const name = line.split(" ")[1]!;
      counts[name] = (counts[name] ?? 0) + 1;
    }
    return counts;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
    await this.loopDone;
  }

  private async loop(): Promise<void> {
    const total = this.faults.reduce((sum, f) => sum + f.weight, 0);
    while (!this.stopped) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, this.rng.int(this.gap.minMs, this.gap.maxMs));
      });
      if (this.stopped) break;
      let draw = this.rng.next() * total;
      const fault = this.faults.find((f) => (draw -= f.weight) < 0) ?? this.faults.at(-1)!;
      // A fault can fail to land (sessions cut while the database restarts): log it and go on.
      const what = await fault.run(this.rng).catch((error: Error) => `failed: ${error.message}`);
      if (what !== null) this.log.push(`+${((Date.now() - this.started) / 1000).toFixed(1)}s ${fault.name} ${what}`);
    }
  }
}

/**
 * SIGKILL a random running worker and start replacements until `workers` are alive again; only
 * while more than {@link quorum} are running (see {@link pickRunning}).
 */
export function killFault(cluster: Cluster, workers: number): Fault {
  return {
    name: "kill",
    weight: 3,
    async run(rng) {
      const victim = pickRunning(cluster, rng, quorum(workers));
      if (!victim) return null;
      await cluster.kill(victim);
      const replacements: string[] = [];
      while (cluster.alive().length < workers) replacements.push(cluster.spawn().name);
      return `${victim.name} (replaced by ${replacements.join(", ")})`;
    },
  };
}

/**
 * SIGSTOP a random worker for longer than its lease, then SIGCONT it; only while more than
 * {@link quorum} are running. (After the nemesis stops, `cluster.resumeAll()` wakes any still paused.)
 */
export function pauseFault(cluster: Cluster, leaseMs: number, workers: number): Fault {
  return {
    name: "pause",
    weight: 2,
    async run(rng) {
      const victim = pickRunning(cluster, rng, quorum(workers));
      if (!victim) return null;
      const ms = leaseMs + rng.int(200, 1500);
      cluster.pause(victim);
      setTimeout(() => victim.paused && cluster.resume(victim), ms).unref();
      return `${victim.name} for ${ms}ms`;
    },
  };
}

/** Terminates the workers' database sessions (never the test's own). */
export function severFault(terminate: () => Promise<number>): Fault {
  return {
    name: "sever",
    weight: 2,
    async run() {
      return `${await terminate()} backends`;
    },
  };
}

/**
 * How many of `workers` the kill and pause faults leave running: all but two (at least one). On a
 * loaded machine a replacement takes 5–10 s to come up; killing and pausing regardless (including
 * replacements as soon as they had claimed their first batch) left one worker, or none, to hold
 * every run, and runnable runs then waited for a free slot past the stuck grace: a shortage the
 * nemesis made, not a fault of the runtime. Faults drawn meanwhile are skipped.
 */
function quorum(workers: number): number {
  return Math.max(1, workers - 2);
}

/**
 * A random running worker (up, i.e. claiming, and not paused), if more than `keep` are; workers
 * still starting do not count, and are never picked.
 */
function pickRunning(cluster: Cluster, rng: Rng, keep: number): ChaosWorker | undefined {
  const running = cluster.alive().filter((w) => w.isReady && !w.paused);
  if (running.length <= keep) return undefined;
  return rng.pick(running);
}
