/* eslint-disable no-control-regex -- these tests look for control characters */
// Terminal escapes: ids and types with control characters are refused where they come in (engine,
// HTTP API, tokens), and what older versions stored anyway is printed escaped by every CLI printer.
// The CLI is the compiled one (child processes) against a real SQLite file.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { onCleanup, testEngine } from "../../test/support/engines.js";
import { runCli } from "../../test/support/cli.js";
import { ask, TEST_WORKFLOWS } from "../../test/support/server.js";
import { createEngine } from "../engine/create-engine.js";
import { silentLogger } from "../engine/logger.js";
import { issueToken } from "../server/auth/tokens.js";
import { createServer } from "../server/create-server.js";
import { waitFor } from "../testing/wait-for.js";
import { escapeTerminal } from "./terminal-escape.js";

const EVIL = "evil\u001b]0;pwned\u0007\u001b[2J\u009b31m";

describe("control characters", () => {
  it("are refused in new run ids, event types and ids, workflow and token names, by the engine and the API", async () => {
    const engine = await testEngine("sqlite", { workflows: TEST_WORKFLOWS });
    await expect(engine.start("paced", { steps: 1 }, { runId: "bell\u0007" })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(engine.start("paced", { steps: 1 }, { runId: "csi\u009b" })).rejects.toThrow(/control characters/);
    await engine.start("paced", { steps: 1 }, { runId: "fine" });
    await expect(engine.sendEvent("fine", "go\u001b[2J")).rejects.toThrow(/control characters/);
    await expect(engine.sendEvent("fine", "go", null, { eventId: "id\u007f" })).rejects.toThrow(/control characters/);
    await expect(issueToken(engine.store, { name: "tok\u001b", scopes: ["read"] }, Date.now())).rejects.toThrow(/control characters/);
    const app = createServer(engine);
    const post = async (path: string, body: unknown) => {
      const res = await app.request(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      return [res.status, ((await res.json()) as any).error?.message];
    };
    for (const [path, body] of [
      ["/runs", { workflow: "paced", input: { steps: 1 }, runId: EVIL }],
      ["/runs", { workflow: "paced\u0007", input: { steps: 1 } }],
      ["/runs/fine/events", { type: EVIL }],
      ["/runs/fine/events", { type: "go", eventId: EVIL }],
      ["/tokens", { name: EVIL, scopes: ["read"] }],
    ] as const) {
      const [status, message] = await post(path, body);
      expect([path, status]).toEqual([path, 400]);
      expect(message).toContain("must not contain control characters");
    }
    expect((await engine.listRuns()).runs.map((r) => r.runId)).toEqual(["fine"]);
    expect(await engine.store.listInbox("fine")).toEqual([]);
  });

  it("stored by an older version, are printed escaped by runs, show, human-requests and audit: no raw ESC, BEL or C1 on stdout", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-escapes-"));
    const store = `sqlite:${join(dir, "cairn.db")}`;
    const engine = await createEngine({ store, workflows: [ask], logger: silentLogger });
    onCleanup(() => engine.close());
    // Straight into the store, as data written before the schemas refused it.
    await engine.store.createRun({ runId: EVIL, workflow: "ask", version: "1", input: "null" }, Date.now());
    await engine.store.appendAudit({ at: Date.now(), actor: `token:${EVIL}`, action: "run.cancel", target: EVIL, detail: { reason: EVIL } });
    const worker = engine.startWorker({ pollInterval: 10 });
    onCleanup(() => worker.stop());
    await waitFor(async () => (await engine.listHumanRequests({ status: "pending" })).length === 1, { what: "the question of the evil run" });
    await worker.stop();

    for (const args of [["runs"], ["runs", "--json"], ["show", EVIL], ["human-requests"], ["audit"]]) {
      const result = await runCli([...args, "--store", store], { cwd: dir });
      expect([args.join(" "), result.code, result.stderr]).toEqual([args.join(" "), 0, ""]);
      expect(result.stdout, args.join(" ")).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
      expect(result.stdout, args.join(" ")).toMatch(/evil(\\x1b|\\u001b)/);
    }
    // The JSON stays JSON, with the same id.
    const listed = JSON.parse((await runCli(["runs", "--json", "--store", store], { cwd: dir })).stdout);
    expect(listed[0].runId).toBe(EVIL);
    // An error that names it is escaped too (stderr).
    const missing = await runCli(["show", `${EVIL}-gone`, "--store", store], { cwd: dir });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(missing.stderr).toContain("evil\\x1b]0;pwned\\x07");
  });

  it("escapeTerminal keeps newlines and tabs and makes the rest visible", () => {
    expect(escapeTerminal("a\u001b[2Jb\u0007\r\n\tc\u202ed\u009b")).toBe("a\\x1b[2Jb\\x07\\x0d\n\tc\\u202ed\\x9b");
  });
});
