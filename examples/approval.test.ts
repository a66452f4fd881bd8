import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngine, silentLogger, type Engine } from "cairn";
import { approval, type ApprovalInput, type ApprovalResult } from "./approval.js";
import { workflows } from "./index.js";
import { countLedger, LEDGER_ENV } from "./ledger.js";
import { waitForEventWait } from "./test-helpers.js";

const HOUR = 3_600_000;
const INPUT: ApprovalInput = { request: "Buy 3 GPUs", approver: "ana", manager: "ben" };

describe("approval workflow (time driven by an injected clock)", () => {
  let now: number;
  let dir: string;
  let ledger: string;
  let engine: Engine;

  beforeEach(async () => {
    now = Date.UTC(2025, 0, 6, 9, 0, 0);
    dir = mkdtempSync(join(tmpdir(), "cairn-approval-"));
    ledger = join(dir, "ledger.txt");
    process.env[LEDGER_ENV] = ledger;
    engine = await createEngine({ store: "memory:", workflows, clock: () => now, logger: silentLogger });
    engine.startWorker({ pollInterval: 10 });
  });

  afterEach(async () => {
    await engine.close();
    delete process.env[LEDGER_ENV];
    rmSync(dir, { recursive: true, force: true });
  });

  it("returns the approver's decision when it comes in time", async () => {
    const run = await engine.start(approval, INPUT, { runId: "po-1" });
    const waiting = await waitForEventWait(engine, run.runId, "approval#0");
    expect(waiting.waitingFor).toContainEqual({ kind: "event", opKey: "approval#0", type: "approval", timeoutAt: now + 72 * HOUR });

    now += 71 * HOUR;
    await engine.sendEvent(run.runId, "approval", { approved: true, by: "ana" }, { eventId: "po-1:ana" });

    const result: ApprovalResult = await run.result({ timeoutMs: 10_000 });
    expect(result).toEqual({ decision: "approved", by: "ana", escalated: false });
    expect(countLedger(ledger)).toEqual(new Map([["po-1:notify-approver#0", 1]]));
  });

  it("escalates to the manager after 72 hours of silence and takes the manager's answer", async () => {
    const run = await engine.start(approval, INPUT, { runId: "po-2" });
    await waitForEventWait(engine, run.runId, "approval#0");

    now += 72 * HOUR + 1;
    const escalated = await waitForEventWait(engine, run.runId, "approval#1");
    expect(escalated.waitingFor).toContainEqual({ kind: "event", opKey: "approval#1", type: "approval", timeoutAt: now + 24 * HOUR });

    await engine.sendEvent(run.runId, "approval", { approved: true, by: "ben" }, { eventId: "po-2:ben" });
    const result: ApprovalResult = await run.result({ timeoutMs: 10_000 });
    expect(result).toEqual({ decision: "approved", by: "ben", escalated: true });

    expect(countLedger(ledger)).toEqual(
      new Map([
        ["po-2:notify-approver#0", 1],
        ["po-2:escalate#0", 1],
      ]),
    );
    const kinds = (await engine.journal(run.runId)).map((e) => `${e.kind} ${e.opKey ?? ""}`.trim());
    expect(kinds).toContain("event.timedout approval#0");
    expect(kinds).toContain("event.received approval#1");
  });

  it("rejects automatically when nobody answers after the escalation either", async () => {
    const run = await engine.start(approval, INPUT, { runId: "po-3" });
    await waitForEventWait(engine, run.runId, "approval#0");
    now += 72 * HOUR + 1;
    await waitForEventWait(engine, run.runId, "approval#1");
    now += 24 * HOUR + 1;

    const result: ApprovalResult = await run.result({ timeoutMs: 10_000 });
    expect(result).toEqual({ decision: "rejected", by: "auto", escalated: true });
  });
});
