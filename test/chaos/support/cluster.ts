import { spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import { onCleanup } from "../../support/engines.js";
import { requireBuild } from "../../support/processes.js";

const WORKER = resolve("test/fixtures/chaos-worker.mjs");
export const CHAOS_WORKFLOWS = resolve("test/fixtures/chaos-workflows.mjs");

/** One worker process of a {@link Cluster}. */
export interface ChaosWorker {
  readonly name: string;
  readonly child: ChildProcess;
  /** Resolves with the engine's worker id once it claims work; rejects if it exits first. */
  readonly ready: Promise<string>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Set once it printed "ready". */
  isReady: boolean;
  /** Set when the test killed it on purpose (SIGKILL). */
  killed: boolean;
  paused: boolean;
  output(): string;
}

/** Worker processes (test/fixtures/chaos-worker.mjs) sharing one store; all SIGKILLed after the test. */
export class Cluster {
  readonly workers: ChaosWorker[] = [];
  private spawned = 0;

  constructor(private readonly env: Record<string, string>) {
    requireBuild();
    onCleanup(() => {
      for (const w of this.workers) if (isAlive(w)) w.child.kill("SIGKILL");
    });
  }

  spawn(extraEnv: Record<string, string> = {}): ChaosWorker {
    const name = `w${++this.spawned}`;
    const child = spawn(process.execPath, [WORKER], { env: { ...process.env, ...this.env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const keep = (chunk: Buffer) => (out = (out + chunk.toString()).slice(-20_000));
    child.stderr!.on("data", keep);
    const ready = new Promise<string>((resolveReady, reject) => {
      child.stdout!.on("data", (chunk: Buffer) => {
        keep(chunk);
        const match = /ready (\S+)/.exec(out);
        if (match) resolveReady(match[1]!);
      });
      child.once("exit", (code, signal) => reject(new Error(`${name} exited before ready (code ${code}, signal ${signal}): ${out}`)));
    });
    ready.catch(() => undefined);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.once("exit", (code, signal) => done({ code, signal })));
    const worker: ChaosWorker = { name, child, ready, exited, isReady: false, killed: false, paused: false, output: () => out };
    void ready.then(
      () => (worker.isReady = true),
      () => undefined,
    );
    this.workers.push(worker);
    return worker;
  }

  alive(): ChaosWorker[] {
    return this.workers.filter(isAlive);
  }

  async kill(worker: ChaosWorker): Promise<void> {
    worker.killed = true;
    worker.child.kill("SIGKILL");
    await worker.exited;
    worker.paused = false;
  }

  pause(worker: ChaosWorker): void {
    worker.paused = true;
    worker.child.kill("SIGSTOP");
  }

  resume(worker: ChaosWorker): void {
    worker.child.kill("SIGCONT");
    worker.paused = false;
  }

  resumeAll(): void {
    for (const w of this.alive()) if (w.paused) this.resume(w);
  }

  /**
   * Workers that were up and died without the test killing them: a worker must survive every
   * database fault. (One that could not start while its sessions were being cut is not counted;
   * {@link topUp} replaces it.)
   */
  casualties(): ChaosWorker[] {
    return this.workers.filter((w) => w.isReady && !w.killed && !isAlive(w));
  }

  /**
   * Starts workers until `count` are alive, and waits until they are all up. One that exits before
   * it is up (the server refused its connection, e.g. too many clients on a shared server, or its
   * session was cut while it opened the store) is replaced, up to `attempts` exits in all; then
   * the last one fails the test.
   */
  async topUp(count: number, attempts = 5): Promise<void> {
    for (let failures = 0; ;) {
      for (let i = this.alive().length; i < count; i++) this.spawn();
      const failed = (await Promise.allSettled(this.alive().map((w) => w.ready))).find((r) => r.status === "rejected");
      if (!failed) return;
      if (++failures >= attempts) throw failed.reason;
    }
  }

  /** Resumes paused workers, then stops every live one with SIGTERM (drain); returns their exits. */
  async stopAll(): Promise<{ name: string; code: number | null; signal: NodeJS.Signals | null }[]> {
    this.resumeAll();
    const live = this.alive();
    for (const w of live) w.child.kill("SIGTERM");
    return Promise.all(live.map(async (w) => ({ name: w.name, ...(await w.exited) })));
  }
}

function isAlive(w: ChaosWorker): boolean {
  return w.child.exitCode === null && w.child.signalCode === null;
}
