import { spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import { expect, it } from "vitest";
import { parseSse, type SseEvent } from "../../src/client/sse.js";
import { createEngine } from "../../src/engine/create-engine.js";
import { silentLogger } from "../../src/engine/logger.js";
import { waitFor } from "../../src/testing/wait-for.js";
import { CLI_MAIN } from "./cli.js";
import { onCleanup } from "./engines.js";
import { requireBuild } from "./processes.js";
import { ProviderServer } from "./provider-server/index.mjs";
import { spawnServe } from "./serve-process.js";
import { durableStoreUrl, type DurableStore } from "./store-urls.js";

const FIXTURE = resolve("test/fixtures/remote-delta-workflows.mjs");
const THINKING = "The moon's gravity pulls the near side of the ocean harder than the far side.";
const TEXT = "Tides rise and fall twice a day because the moon pulls on the oceans.";

/** The provider holds the first answer after its thinking and four words of text (Responses events: 3 + thinking words + 4 + text words). */
const HOLD_AFTER = 3 + THINKING.split(" ").length + 4 + 4;

interface Delta {
  opKey: string;
  attempt: number;
  data: { kind: string; text: string };
  catchUp?: true;
}

/** Spawns `cairn worker` on the store; resolves once it says it is ready. SIGKILLed after the test if alive. */
async function spawnCliWorker(store: string, env: Record<string, string>): Promise<{ child: ChildProcess; exited: Promise<unknown> }> {
  requireBuild();
  const child = spawn(process.execPath, [CLI_MAIN, "worker", "--store", store, "--workflows", FIXTURE, "--lease-ms", "1000", "--poll-ms", "50"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NO_COLOR: "1", ...env },
  });
  const exited = new Promise((done) => child.once("exit", done));
  onCleanup(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGKILL");
    await exited;
  });
  let output = "";
  await new Promise<void>((ready, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (/ready/.test(output)) ready();
    });
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.once("exit", (code, signal) => reject(new Error(`cairn worker exited (code ${code}, signal ${signal}) before it was ready:\n${output}`)));
  });
  return { child, exited };
}

/** Follows a run's SSE stream into `events` until `until` says stop or `abort` is called. */
function follow(url: string, headers: Record<string, string>, events: SseEvent[], until: (e: SseEvent) => boolean) {
  const abort = new AbortController();
  onCleanup(() => abort.abort());
  const done = (async () => {
    const res = await fetch(url, { headers, signal: abort.signal });
    expect(res.status).toBe(200);
    try {
      for await (const event of parseSse(res.body!)) {
        events.push(event);
        if (until(event)) break;
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    }
    abort.abort();
  })();
  return { done, abort: () => abort.abort() };
}

const deltasOf = (events: SseEvent[]) => events.filter((e) => e.event === "delta").map((e) => JSON.parse(e.data) as Delta);
const entriesOf = (events: SseEvent[]) =>
  events.filter((e) => e.event === "entry").map((e) => JSON.parse(e.data) as { seq: number; kind: string; opKey: string | null; data: any });

/**
 * The text of each (step, attempt, kind) as a client rebuilds it: a run of `catchUp` deltas replaces
 * what it showed of that attempt, other deltas append.
 */
function rebuild(deltas: Delta[]): Map<string, string> {
  const shown = new Map<string, string>();
  let previousCatchUp: string | undefined;
  for (const d of deltas) {
    const attemptKey = `${d.opKey} ${d.attempt}`;
    const key = `${attemptKey} ${d.data.kind}`;
    if (d.catchUp && previousCatchUp !== attemptKey) for (const k of [...shown.keys()]) if (k.startsWith(`${attemptKey} `)) shown.delete(k);
    previousCatchUp = d.catchUp ? attemptKey : undefined;
    shown.set(key, (shown.get(key) ?? "") + d.data.text);
  }
  return shown;
}

/**
 * Live deltas from a `cairn worker` process reach the run streams of a separate `cairn serve
 * --no-worker` process on one store: live, with catch-up on reconnect, and across a SIGKILL of the
 * worker mid-generation (the stream says the attempt was abandoned and shows the new one).
 */
export function remoteDeltasSuite(kind: DurableStore): void {
  it("a stream of `cairn serve` shows a `cairn worker`'s deltas live, catches up on reconnect, and follows a new attempt after the worker is SIGKILLed", async () => {
    const provider = await new ProviderServer().start();
    onCleanup(() => provider.close());
    let release!: () => void;
    const hold = new Promise<void>((done) => (release = done));
    onCleanup(() => release());
    // The first answer streams its thinking and a few words, then holds until the worker is killed;
    // the second (after the crash) streams whole, slowly enough to be seen live.
    provider.enqueue({ thinking: THINKING, text: TEXT, hold, holdAfter: HOLD_AFTER, usage: { input: 30, output: 17 } });
    provider.enqueue({ thinking: THINKING, text: TEXT, eventDelayMs: 15, usage: { input: 30, output: 17 } });

    const store = durableStoreUrl(kind);
    const engine = await createEngine({ store, logger: silentLogger });
    onCleanup(() => engine.close());
    const env = { CAIRN_TEST_PROVIDER_URL: provider.url };
    const serve = await spawnServe(["--no-worker", "--store", store, "--workflows", FIXTURE], env);
    const first = await spawnCliWorker(store, env);
    const started = await fetch(`${serve.url}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ workflow: "narrator", input: { prompt: "Why tides?" }, runId: "tides" }),
    });
    expect(started.status).toBe(201);
    const url = `${serve.url}/runs/tides/stream`;

    // A client follows the run while the model generates, sees deltas (thinking and text) live, and drops.
    const seen: SseEvent[] = [];
    const one = follow(url, {}, seen, () => deltasOf(seen).filter((d) => d.data.kind === "text").length >= 1);
    await one.done;
    await waitFor(() => provider.requests.length === 1, { timeoutMs: 10_000, what: "the model call" });
    const firstDeltas = deltasOf(seen);
    expect(firstDeltas.every((d) => d.opKey.endsWith("/model#0") && d.attempt === 1)).toBe(true);
    const firstShown = rebuild(firstDeltas);
    const opKey = firstDeltas[0]!.opKey;
    expect(firstShown.get(`${opKey} 1 thinking`)).toBe(THINKING);
    expect(TEXT.startsWith(firstShown.get(`${opKey} 1 text`)!)).toBe(true);
    expect(entriesOf(seen).some((e) => e.kind === "step.completed" && e.opKey === opKey)).toBe(false);
    // Deltas carry no id: Last-Event-ID names the last journal entry.
    expect(seen.filter((e) => e.event === "delta").every((e) => e.id === undefined)).toBe(true);
    const lastId = seen.filter((e) => e.id !== undefined).at(-1)!.id!;

    // It reconnects with Last-Event-ID, still mid-generation: the output so far first (catchUp), then the rest.
    const again: SseEvent[] = [];
    const two = follow(url, { "last-event-id": lastId }, again, (e) => e.event === "end");
    await waitFor(() => deltasOf(again).some((d) => d.data.kind === "text"), { timeoutMs: 10_000, what: "the catch-up after the reconnection" });
    const catchUp = deltasOf(again);
    expect(catchUp[0]!.catchUp).toBe(true);
    expect(entriesOf(again)[0]?.seq ?? Number(lastId) + 1).toBe(Number(lastId) + 1);
    const caught = rebuild(catchUp);
    expect(caught.get(`${opKey} 1 thinking`)).toBe(THINKING);
    expect(caught.get(`${opKey} 1 text`)!.length).toBeGreaterThanOrEqual(firstShown.get(`${opKey} 1 text`)!.length);

    // The worker dies mid-generation; another takes the run over once its lease expires, and calls the model again.
    first.child.kill("SIGKILL");
    await first.exited;
    release();
    const deltasBeforeCrash = deltasOf(again).length;
    await spawnCliWorker(store, env);
    await two.done;

    const after = again.slice(again.findIndex((e, i) => e.event === "delta" && deltasOf(again.slice(0, i + 1)).length === deltasBeforeCrash) + 1);
    const entries = entriesOf(again);
    // The journal says the first attempt was abandoned and a second began; its deltas follow, under attempt 2.
    const attempts = entries.filter((e) => e.kind === "step.started" && e.opKey === opKey);
    expect(attempts.map((e) => e.data.attempt)).toContain(2);
    const newAttemptAt = again.findIndex((e) => e.event === "entry" && JSON.parse(e.data).kind === "step.started" && JSON.parse(e.data).opKey === opKey);
    const secondDeltas = deltasOf(after).filter((d) => d.attempt === 2);
    expect(secondDeltas.length).toBeGreaterThan(0);
    expect(again.findIndex((e) => e.event === "delta" && JSON.parse(e.data).attempt === 2)).toBeGreaterThan(newAttemptAt);
    expect(deltasOf(after).every((d) => d.attempt === 2)).toBe(true);
    const shown = rebuild(deltasOf(again));
    expect(shown.get(`${opKey} 2 thinking`)).toBe(THINKING);
    expect(shown.get(`${opKey} 2 text`)).toBe(TEXT);
    // Every delta came before the journaled outcome that replaces it; then the run ended.
    const completedAt = again.findIndex((e) => e.event === "entry" && JSON.parse(e.data).kind === "step.completed" && JSON.parse(e.data).opKey === opKey);
    expect(completedAt).toBeGreaterThan(again.findLastIndex((e) => e.event === "delta"));
    expect(again.at(-1)!.event).toBe("end");
    expect(JSON.parse(again.at(-1)!.data).status).toBe("completed");
    expect(provider.requests).toHaveLength(2);

    // Never journaled piece by piece, and nothing of the step is left in the store once its outcome is.
    const journal = await engine.journal("tides");
    for (const entry of journal.filter((e) => JSON.stringify(e.data ?? null).includes("twice"))) expect(JSON.stringify(entry.data)).toContain(TEXT);
    await waitFor(async () => (await engine.store.readLiveDeltas(["tides"], 0, "reader")).every((r) => r.kind === "end"), {
      timeoutMs: 5_000,
      what: "the step's live records to go",
    });
  }, 30_000);
}
