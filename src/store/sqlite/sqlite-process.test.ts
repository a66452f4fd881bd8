import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../open-store.js";

// Worker processes cannot load TypeScript (no tsx here), so the store and core layers are
// transpiled once into a temporary directory, with node_modules linked beside them.
const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..", "..");
const fixtures = join(here, "fixtures");
let build: string;
let dir: string;

function transpileTree(from: string, to: string): void {
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    if (entry.isDirectory()) {
      transpileTree(source, join(to, entry.name));
    } else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) {
      const output = ts.transpileModule(readFileSync(source, "utf8"), {
        compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
        fileName: source,
      });
      mkdirSync(to, { recursive: true });
      writeFileSync(join(to, entry.name.replace(/\.ts$/, ".js")), output.outputText);
    }
  }
}

beforeAll(() => {
  build = mkdtempSync(join(tmpdir(), "cairn-build-"));
  writeFileSync(join(build, "package.json"), JSON.stringify({ type: "module" }));
  symlinkSync(join(root, "node_modules"), join(build, "node_modules"), "dir");
  for (const layer of ["core", "store"]) transpileTree(join(root, "src", layer), join(build, "src", layer));
  cpSync(join(root, "src", "store", "migrations"), join(build, "src", "store", "migrations"), { recursive: true });
  dir = mkdtempSync(join(tmpdir(), "cairn-procs-"));
});

afterAll(() => {
  rmSync(build, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(script: string, args: string[], onStdout?: (text: string) => void): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(fixtures, script), ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      onStdout?.(stdout);
    });
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

function parse<T>(finished: Finished): T {
  expect(finished.stderr, `stderr of a child process`).toBe("");
  expect(finished.code).toBe(0);
  return JSON.parse(finished.stdout.trim().split("\n").at(-1) ?? "") as T;
}

const openStoreModule = (): string => join(build, "src", "store", "open-store.js");

describe("several processes on one SQLite file", () => {
  it("migrate a fresh file concurrently, and exactly one creates a contested run", async () => {
    const path = join(dir, "race", "cairn.db");
    const startAt = String(Date.now() + 1500);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => run("create-racer.mjs", [openStoreModule(), path, `racer-${i}`, startAt])));
    const created = results.map((finished) => parse<{ created: boolean }>(finished).created);
    expect(created.filter(Boolean)).toHaveLength(1);
    const store = await openStore(`sqlite:${path}`);
    expect(await store.readJournal("contested")).toHaveLength(1);
    await store.close();
  }, 60_000);

  it("never claim the same run twice", async () => {
    const path = join(dir, "claims.db");
    const store = await openStore(`sqlite:${path}`);
    for (let i = 0; i < 240; i++) await store.createRun({ runId: `r${String(i).padStart(3, "0")}`, workflow: "wf", version: "1", input: "1" }, i);
    const goFile = join(dir, "go");
    let ready = 0;
    let allReady!: () => void;
    const everyoneReady = new Promise<void>((resolve) => (allReady = resolve));
    const workers = Array.from({ length: 4 }, (_, i) =>
      run("claim-worker.mjs", [openStoreModule(), path, `w${i}`, goFile], (out) => {
        if (out === "ready\n" && ++ready === 4) allReady();
      }),
    );
    // A worker that dies before it is ready must fail the test, not hang it.
    await Promise.race([everyoneReady, Promise.race(workers)]);
    writeFileSync(goFile, "");
    const results = await Promise.all(workers);
    const outcomes = results.map((finished) => parse<{ claimed: string[]; refused: string[] }>(finished));
    const claimed = outcomes.flatMap((outcome) => outcome.claimed);
    expect(outcomes.flatMap((outcome) => outcome.refused)).toEqual([]);
    expect(claimed).toHaveLength(240);
    expect(new Set(claimed).size).toBe(240);
    expect(outcomes.filter((outcome) => outcome.claimed.length > 0).length, "workers that got work").toBeGreaterThan(1);
    const page = await store.listRuns({ status: ["completed"], limit: 1000 });
    expect(page.runs).toHaveLength(240);
    for (const completed of page.runs) expect(completed.leaseEpoch).toBe(1);
    await store.close();
  }, 60_000);

  it("wait for another process's write lock, up to the busy timeout", async () => {
    const path = join(dir, "locked.db");
    const patient = await openStore(`sqlite:${path}`);
    const impatient = await openStore(`sqlite:${path}`, { busyTimeoutMs: 100 });
    await patient.createRun({ runId: "r1", workflow: "wf", version: "1", input: "1" }, 1);
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = run("lock-holder.mjs", [path, "1200"], (out) => out.includes("locked") && locked());
    await isLocked;
    const request = { workerId: "w", now: 10, leaseMs: 1000, limit: 1, workflows: [{ name: "wf", version: "1" }] };
    await expect(impatient.claimRuns(request)).rejects.toMatchObject({ code: "SQLITE_BUSY" });
    const started = Date.now();
    const claimed = await patient.claimRuns(request);
    expect(Date.now() - started).toBeGreaterThan(300);
    expect(claimed.map((r) => r.runId)).toEqual(["r1"]);
    expect((await holder).code).toBe(0);
    await impatient.close();
    await patient.close();
  }, 30_000);
});
