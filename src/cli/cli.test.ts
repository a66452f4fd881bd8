import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = join(ROOT, "dist/src/cli/main.js");
const ENTRY = join(ROOT, "dist/src/index.js");
const COMMANDS = [
  "dev",
  "worker",
  "serve",
  "workers",
  "start",
  "runs",
  "show",
  "send",
  "cancel",
  "retry",
  "fork",
  "answer",
  "human-requests",
  "retire",
  "reinstate",
  "migrate",
  "audit",
  "prune",
  "export",
  "import",
];

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

let dir: string;
let store: string;

/** Runs the compiled CLI to completion. */
function cli(...args: string[]): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { cwd: dir, env: { ...process.env, CAIRN_STORE: store } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Retries `probe` until it returns a value or the deadline passes. */
async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs}ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Spawns the CLI and resolves once a stdout line matches `ready`; `output()` returns stdout so far. */
function spawnUntil(args: string[], ready: RegExp): Promise<{ child: ChildProcess; line: string; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { cwd: dir, env: { ...process.env, CAIRN_STORE: store } });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`cairn ${args[0]} did not print ${ready} within 20s.\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, 20_000);
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split("\n").find((l) => ready.test(l));
      if (line) {
        clearTimeout(timer);
        resolve({ child, line, output: () => stdout });
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`cairn ${args[0]} exited with ${code} before printing ${ready}.\nstderr: ${stderr}`));
    });
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    const kill = setTimeout(() => child.kill("SIGKILL"), 15_000);
    child.once("exit", (code) => {
      clearTimeout(kill);
      resolve(code);
    });
    child.kill("SIGTERM");
  });
}

beforeAll(() => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: compile the project first (npm run build), then run the tests.`);
  dir = mkdtempSync(join(tmpdir(), "cairn-cli-"));
  store = `sqlite:${join(dir, "x.db")}`;
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("help", () => {
  it("lists every command", async () => {
    const { code, stdout } = await cli("--help");
    expect(code).toBe(0);
    for (const command of COMMANDS) expect(stdout).toMatch(new RegExp(`^\\s+${command}\\b`, "m"));
    // The deprecated older names still run (see agent-show.test.ts, deploys-spec.ts) but are not listed.
    for (const old of ["inbox", "drain", "undrain"]) expect(stdout).not.toMatch(new RegExp(`^\\s+${old}\\b`, "m"));
  });

  it.concurrent.each(COMMANDS)("%s --help describes the command and its --store option", async (command) => {
    const { code, stdout } = await cli(command, "--help");
    expect(code).toBe(0);
    expect(stdout).toContain(`Usage: cairn ${command}`);
    expect(stdout).toContain("--store <url>");
  });
});

describe("serve", () => {
  it("refuses a non-loopback host without token auth, and says to add --auth tokens", async () => {
    const { code, stdout, stderr } = await cli("serve", "--host", "0.0.0.0", "--port", "0");
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/Refusing to listen on 0\.0\.0\.0 without authentication/);
    expect(stderr).toContain("--auth tokens");
  });

  it("serves the API on 127.0.0.1 with a worker, and stops on SIGTERM", async () => {
    const { child, line } = await spawnUntil(["serve", "--port", "0", "--store", store], /listening on http:\/\/127\.0\.0\.1:\d+/);
    try {
      const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(line)![1]!;
      const health = await fetch(`${url}/health`);
      expect(await health.json()).toEqual({ status: "ok" });
      const workers = (await (await fetch(`${url}/workers`)).json()) as { workers: unknown[] };
      expect(workers.workers.length).toBeGreaterThan(0);
      // The built dashboard beside the API; a view's URL gets the app, so a reload keeps it.
      const ui = await fetch(`${url}/ui/runs/some-run`);
      expect(ui.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(await ui.text()).toContain('<div id="root">');
    } finally {
      expect(await stop(child)).toBe(0);
    }
  });

  it("--no-dashboard serves the API alone", async () => {
    const { child, output } = await spawnUntil(["serve", "--port", "0", "--no-dashboard", "--store", store], /dashboard: off/);
    try {
      const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(output())![1]!;
      expect((await fetch(`${url}/ui/`)).status).toBe(404);
    } finally {
      expect(await stop(child)).toBe(0);
    }
  });
});

describe("bad arguments", () => {
  it("bad JSON exits 2 and names the argument", async () => {
    const { code, stdout, stderr } = await cli("send", "some-run", "review", "{not json", "--store", store);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain("payload");
    expect(stderr).toMatch(/not valid JSON/i);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it("bad --input JSON exits 2 and names the option", async () => {
    const { code, stderr } = await cli("start", "research", "--input", "{topic:", "--store", store);
    expect(code).toBe(2);
    expect(stderr).toContain("--input");
  });

  it("bad numbers and statuses exit 2 and say what to pass", async () => {
    const concurrency = await cli("worker", "--concurrency", "lots", "--store", store);
    expect(concurrency.code).toBe(2);
    expect(concurrency.stderr).toContain("--concurrency");
    expect(concurrency.stderr).toMatch(/whole number/);
    const status = await cli("runs", "--status", "sleeping", "--store", store);
    expect(status.code).toBe(2);
    expect(status.stderr).toContain("--status");
    expect(status.stderr).toContain("suspended");
  });

  it("an unknown command or a missing argument exits 2", async () => {
    expect((await cli("launch")).code).toBe(2);
    expect((await cli("show")).code).toBe(2);
  });

  it("a missing workflow module exits 2", async () => {
    const { code, stderr } = await cli("start", "x", "--workflows", "nope.mjs", "--store", store);
    expect(code).toBe(2);
    expect(stderr).toContain("nope.mjs");
  });
});

describe("store", () => {
  it("migrate, then runs --json on the empty store gives []", async () => {
    const migrated = await cli("migrate", "--store", store);
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toContain("up to date");
    const runs = await cli("runs", "--json", "--store", store);
    expect(runs.code).toBe(0);
    expect(JSON.parse(runs.stdout)).toEqual([]);
  });

  it("an unknown run exits 1 with RUN_NOT_FOUND", async () => {
    for (const args of [
      ["show", "no-such-run"],
      ["send", "no-such-run", "review", "{}"],
      ["cancel", "no-such-run"],
    ]) {
      const { code, stderr } = await cli(...args, "--store", store);
      expect(code, args.join(" ")).toBe(1);
      expect(stderr).toMatch(/^error \[RUN_NOT_FOUND\]: /m);
      expect(stderr).not.toMatch(/\n\s+at /);
    }
  });
});

describe("a run from start to completion", () => {
  it("start → worker → send → completed", async () => {
    if (!existsSync(ENTRY)) throw new Error(`${ENTRY} is missing: the package entry must export defineWorkflow for this test's fixture.`);
    const fixture = join(dir, "waiter.mjs");
    writeFileSync(
      fixture,
      [
        `import { defineWorkflow } from ${JSON.stringify(pathToFileURL(ENTRY).href)};`,
        `export const waiter = defineWorkflow({`,
        `  name: "waiter",`,
        `  version: "1",`,
        `  async run(ctx, input) {`,
        `    const go = await ctx.waitForEvent("go");`,
        `    return ctx.step("finish", () => ({ input, go }));`,
        `  },`,
        `});`,
      ].join("\n"),
    );

    const started = await cli("start", "waiter", "--input", '{"n":1}', "--run-id", "flow-1", "--workflows", fixture, "--store", store);
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout.trim()).toBe("flow-1");

    const { child, line } = await spawnUntil(["worker", "--workflows", fixture, "--poll-ms", "50", "--store", store], /^cairn worker \S+ ready \(/);
    try {
      expect(line).toContain("waiter@1");
      const workerId = /^cairn worker (\S+) ready/.exec(line)![1];
      const workers = await eventually("the worker in the registry", async () => {
        const listed = JSON.parse((await cli("workers", "--json", "--store", store)).stdout) as { workerId: string; workflows: string[] }[];
        return listed.length > 0 ? listed : undefined;
      });
      expect(workers).toEqual([expect.objectContaining({ workerId, workflows: ["waiter@1"] })]);
      const stuck = await cli("runs", "--stuck", "--json", "--store", store);
      expect(stuck.code).toBe(0);
      expect(JSON.parse(stuck.stdout)).toEqual([]);
      await eventually("the run to wait for its event", async () => {
        const shown = await cli("show", "flow-1", "--json", "--store", store);
        return (JSON.parse(shown.stdout) as { run: { status: string } }).run.status === "suspended" ? true : undefined;
      });

      const sent = await cli("send", "flow-1", "go", '{"ok":true}', "--event-id", "go-1", "--store", store);
      expect(sent.code).toBe(0);

      const run = await eventually("the run to complete", async () => {
        const shown = await cli("show", "flow-1", "--json", "--store", store);
        const view = JSON.parse(shown.stdout) as { run: { status: string; output: unknown }; journal: { kind: string }[] };
        return view.run.status === "completed" ? view : undefined;
      });
      expect(run.run.output).toEqual({ input: { n: 1 }, go: { ok: true } });
      expect(run.journal.map((entry) => entry.kind)).toContain("event.received");

      const listed = await cli("runs", "--status", "completed", "--json", "--store", store);
      expect(listed.code).toBe(0);
      expect((JSON.parse(listed.stdout) as { runId: string }[]).map((r) => r.runId)).toContain("flow-1");
      const searched = await cli("runs", "--search", "FLOW-", "--json", "--store", store);
      expect((JSON.parse(searched.stdout) as { runId: string }[]).map((r) => r.runId)).toEqual(["flow-1"]);
      expect(JSON.parse((await cli("runs", "--search", "nothing-like-it", "--json", "--store", store)).stdout)).toEqual([]);

      const text = await cli("show", "flow-1", "--store", store);
      expect(text.stdout).toMatch(/status\s+completed/);
      expect(text.stdout).toMatch(/event\.received\s+go#0\s+"go" \(eventId go-1\)/);

      const finished = run.journal.findIndex((entry) => entry.kind === "step.completed") + 1;
      const halfPatch = await cli("fork", "flow-1", "--at", String(finished), "--patch-seq", String(finished), "--store", store);
      expect(halfPatch.code).toBe(2);
      expect(halfPatch.stderr).toMatch(/--patch-seq and --patch-value go together/);
      const forked = await cli(
        "fork",
        "flow-1",
        "--at",
        String(finished),
        "--patch-seq",
        String(finished),
        "--patch-value",
        '"patched"',
        "--run-id",
        "flow-2",
        "--store",
        store,
      );
      expect(forked.code, forked.stderr).toBe(0);
      expect(forked.stdout).toMatch(/^flow-2: forked from flow-1 at seq \d+ \(step result at seq \d+ patched\); pending\./);
      const fork = await eventually("the fork to complete", async () => {
        const shown = await cli("show", "flow-2", "--json", "--store", store);
        const view = JSON.parse(shown.stdout) as { run: { status: string; output: unknown } };
        return view.run.status === "completed" ? view : undefined;
      });
      expect(fork.run.output).toBe("patched");
      expect((await cli("show", "flow-2", "--store", store)).stdout).toMatch(/run\.forked\s+from flow-1 at seq \d+, step result at seq \d+ patched/);
    } finally {
      expect(await stop(child)).toBe(0);
    }
  });
});

describe("a question for a person", () => {
  it("human-requests lists it; answer takes one of its options and refuses others", async () => {
    const fixture = join(dir, "asker.mjs");
    writeFileSync(
      fixture,
      [
        `import { defineWorkflow } from ${JSON.stringify(pathToFileURL(ENTRY).href)};`,
        `export const asker = defineWorkflow({`,
        `  name: "asker",`,
        `  async run(ctx) {`,
        `    const reply = await ctx.askHuman({ name: "deploy", question: "Deploy?", options: ["approve", "reject"] });`,
        `    return { option: reply.option, by: reply.by };`,
        `  },`,
        `});`,
      ].join("\n"),
    );
    expect((await cli("start", "asker", "--run-id", "ask-1", "--workflows", fixture, "--store", store)).code).toBe(0);
    const { child } = await spawnUntil(["worker", "--workflows", fixture, "--poll-ms", "50", "--store", store], /^cairn worker \S+ ready \(/);
    try {
      const inbox = await eventually("the question in the inbox", async () => {
        const listed = await cli("human-requests", "--store", store);
        return listed.stdout.includes("ask-1:deploy#0") ? listed.stdout : undefined;
      });
      expect(inbox).toContain("approve|reject");
      const bad = await cli("answer", "ask-1:deploy#0", "maybe", "--store", store);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain("approve, reject");
      const good = await cli("answer", "ask-1:deploy#0", "approve", "--by", "ada", "--message", "ship after lunch", "--store", store);
      expect(good.code, good.stderr).toBe(0);
      const run = await eventually("the run to complete", async () => {
        const shown = JSON.parse((await cli("show", "ask-1", "--json", "--store", store)).stdout) as { run: { status: string; output: unknown } };
        return shown.run.status === "completed" ? shown.run : undefined;
      });
      expect(run.output).toEqual({ option: "approve", by: "ada" });
      expect((await cli("show", "ask-1", "--store", store)).stdout).toMatch(/human\.answered\s+deploy#0\s+ask-1:deploy#0: approve "ship after lunch" by ada/);

      // A question whose run is cancelled leaves the inbox: closed, and an answer is refused.
      expect((await cli("start", "asker", "--run-id", "ask-2", "--workflows", fixture, "--store", store)).code).toBe(0);
      await eventually("the second question", async () =>
        (await cli("human-requests", "--store", store)).stdout.includes("ask-2:deploy#0") ? true : undefined,
      );
      expect((await cli("cancel", "ask-2", "--store", store)).code).toBe(0);
      await eventually("the run to be cancelled", async () => {
        const shown = JSON.parse((await cli("show", "ask-2", "--json", "--store", store)).stdout) as { run: { status: string } };
        return shown.run.status === "cancelled" ? true : undefined;
      });
      expect((await cli("human-requests", "--store", store)).stdout).not.toContain("ask-2:deploy#0");
      const all = (await cli("human-requests", "--all", "--store", store)).stdout;
      expect(all).toMatch(/ask-2:deploy#0 .*closed \(run cancelled\)/);
      const closed = await cli("answer", "ask-2:deploy#0", "approve", "--store", store);
      expect(closed.code).not.toBe(0);
      expect(closed.stderr).toContain("HUMAN_REQUEST_CLOSED");
      const limited = (await cli("human-requests", "--all", "--limit", "1", "--store", store)).stdout;
      expect(limited).toContain("More requests match than the 1 shown");
    } finally {
      expect(await stop(child)).toBe(0);
    }
  });
});

describe("dev", () => {
  it("runs the demo on a fresh store and takes the review from another process", async () => {
    const devStore = `sqlite:${join(dir, "dev.db")}`;
    const dev = await spawnUntil(["dev", "--no-banner", "--port", "0", "--store", devStore], /^Started demo run (\S+)/);
    try {
      const url = /dashboard: (http:\/\/127\.0\.0\.1:\d+)\/ui\//.exec(dev.output())?.[1];
      expect(url, dev.output()).toBeDefined();
      expect(await (await fetch(`${url}/ui/`)).text()).toContain('<div id="root">');
      const runId = /^Started demo run (\S+)/.exec(dev.line)?.[1] ?? "";
      const requestId = `${runId}:review#0`;
      await eventually("the demo to ask for its review", async () => (/answer '?\S+:review#0'? approve/.test(dev.output()) ? true : undefined));
      expect(dev.output()).toContain("Review the draft on");
      const answered = await cli("answer", requestId, "approve", "--store", devStore);
      expect(answered.code, answered.stderr).toBe(0);
      await eventually("the demo to complete", async () => (dev.output().includes("The demo run is completed") ? true : undefined));
      expect(dev.output()).toMatch(/human\.answered\s+review#0/);
    } finally {
      expect(await stop(dev.child)).toBe(0);
    }
  });
});

describe("tokens and the audit log", () => {
  it("token create prints the token once; list never shows it; serve --auth tokens takes it until revoked; audit records it all", async () => {
    const tokenStore = `sqlite:${join(dir, "tokens.db")}`;
    const created = await cli("token", "create", "--name", "ci", "--scope", "read,write", "--store", tokenStore);
    expect(created.code, created.stderr).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^cairn_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    expect(created.stderr).not.toContain(token);
    const id = token.split("_")[1]!;

    const listed = await cli("token", "list", "--json", "--store", tokenStore);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(token.slice(24));
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ id, name: "ci", scopes: ["read", "write"], namespace: null, revokedAt: null })]);
    expect(listed.stdout).not.toContain('"hash"');

    const bad = await cli("token", "create", "--name", "x", "--scope", "admin", "--namespace", "team", "--store", tokenStore);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("namespaced token cannot have the admin scope");
    expect((await cli("token", "create", "--name", "x", "--scope", "root", "--store", tokenStore)).code).toBe(2);

    const { child, line, output } = await spawnUntil(
      ["serve", "--port", "0", "--auth", "tokens", "--no-worker", "--store", tokenStore],
      /listening on http:\/\/127\.0\.0\.1:\d+/,
    );
    try {
      const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(line)![1]!;
      expect((await fetch(`${url}/runs`)).status).toBe(401);
      expect((await fetch(`${url}/runs`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      expect((await fetch(`${url}/audit`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(403);
      const revoked = await cli("token", "revoke", id, "--store", tokenStore);
      expect(revoked.code, revoked.stderr).toBe(0);
      expect((await fetch(`${url}/runs`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
      expect(output()).not.toContain(token);
    } finally {
      expect(await stop(child)).toBe(0);
    }
    expect((await cli("token", "revoke", id, "--store", tokenStore)).stderr).toContain("TOKEN_NOT_FOUND");

    const audit = await cli("audit", "--json", "--store", tokenStore);
    expect(audit.code).toBe(0);
    const entries = JSON.parse(audit.stdout) as { actor: string; action: string; target: string }[];
    expect(entries.map((e) => [e.action, e.target])).toEqual([
      ["token.revoke", id],
      ["token.create", id],
    ]);
    expect(entries.every((e) => e.actor.startsWith("cli:"))).toBe(true);
    expect(audit.stdout).not.toContain(token.slice(24));
  });

  it("cancel, retry, send and answer through the CLI are audited; show redacts secret step results", async () => {
    const fixture = join(dir, "secretive.mjs");
    writeFileSync(
      fixture,
      [
        `import { defineWorkflow } from ${JSON.stringify(pathToFileURL(ENTRY).href)};`,
        `export const secretive = defineWorkflow({`,
        `  name: "secretive",`,
        `  version: "1",`,
        `  async run(ctx) {`,
        `    const key = await ctx.step("key", () => "sk-live-123456", { secret: true });`,
        `    await ctx.step("plain", () => "visible-value");`,
        `    const go = await ctx.waitForEvent("go");`,
        `    await ctx.step("copy", () => "copied " + go.pw);`,
        `    await ctx.waitForEvent("end");`,
        `    return key.length;`,
        `  },`,
        `});`,
      ].join("\n"),
    );
    const auditStore = `sqlite:${join(dir, "audit.db")}`;
    expect((await cli("start", "secretive", "--run-id", "sec-1", "--workflows", fixture, "--store", auditStore)).code).toBe(0);
    const { child } = await spawnUntil(["worker", "--workflows", fixture, "--poll-ms", "50", "--store", auditStore], /^cairn worker \S+ ready \(/);
    try {
      await eventually("the run to wait", async () => {
        const shown = await cli("show", "sec-1", "--json", "--store", auditStore);
        return (JSON.parse(shown.stdout) as { run: { status: string } }).run.status === "suspended" ? true : undefined;
      });
      const json = await cli("show", "sec-1", "--json", "--store", auditStore);
      expect(json.stdout).not.toContain("sk-live-123456");
      expect(json.stdout).toContain("[redacted]");
      expect(json.stdout).toContain("visible-value");
      const text = await cli("show", "sec-1", "--store", auditStore);
      expect(text.stdout).not.toContain("sk-live-123456");
      // A secret event: the run uses it, show redacts it and its copy in a later step.
      expect((await cli("send", "sec-1", "go", '{"pw":"cli-secret-9876"}', "--secret", "--event-id", "g-1", "--store", auditStore)).code).toBe(0);
      await eventually("the secret event consumed", async () => {
        const shown = await cli("show", "sec-1", "--json", "--store", auditStore);
        return shown.stdout.includes("copied [redacted]") ? true : undefined;
      });
      const shown = await cli("show", "sec-1", "--json", "--store", auditStore);
      expect(shown.stdout).not.toContain("cli-secret-9876");
      expect((await cli("show", "sec-1", "--store", auditStore)).stdout).not.toContain("cli-secret-9876");
      expect((await cli("send", "sec-1", "nudge", "--event-id", "n-1", "--store", auditStore)).code).toBe(0);
      expect((await cli("cancel", "sec-1", "--reason", "done", "--store", auditStore)).code).toBe(0);
    } finally {
      expect(await stop(child)).toBe(0);
    }
    const audit = JSON.parse((await cli("audit", "--json", "--store", auditStore)).stdout) as { actor: string; action: string; target: string; detail: any }[];
    expect(audit.map((e) => [e.action, e.target])).toEqual([
      ["run.cancel", "sec-1"],
      ["run.event", "sec-1"],
      ["run.event", "sec-1"],
      ["run.start", "sec-1"],
    ]);
    expect(audit[0]!.detail).toEqual({ reason: "done" });
    const filtered = JSON.parse((await cli("audit", "--json", "--action", "run.start", "--store", auditStore)).stdout) as unknown[];
    expect(filtered).toHaveLength(1);
  });
});
