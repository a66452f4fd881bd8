import { describe, expect, it } from "vitest";
import * as client from "../client/index.js";
import { POLICY_STATUSES } from "./retention-schemas.js";
import { FAILED_STATUSES, LIVE_STATUSES, RUN_STATUSES, TERMINAL_ENTRY_KINDS, TERMINAL_STATUSES, isFailed, isTerminal } from "./run.js";

describe("one definition of terminal", () => {
  it("every status is either live or terminal, never both, and dead is terminal and failed", () => {
    for (const status of RUN_STATUSES) {
      expect(LIVE_STATUSES.includes(status), status).toBe(!isTerminal(status));
      expect(TERMINAL_STATUSES.includes(status), status).toBe(isTerminal(status));
    }
    expect([...LIVE_STATUSES, ...TERMINAL_STATUSES].sort()).toEqual([...RUN_STATUSES].sort());
    expect(isTerminal("dead")).toBe(true);
    expect(isFailed("dead")).toBe(true);
    expect(RUN_STATUSES.filter(isFailed)).toEqual(["failed", "compensation_failed", "dead"]);
  });

  it("the terminal statuses are those with an ending journal entry, and the failed ones are among them", () => {
    expect(Object.keys(TERMINAL_ENTRY_KINDS).sort()).toEqual([...TERMINAL_STATUSES].sort());
    for (const status of FAILED_STATUSES) expect(isTerminal(status), status).toBe(true);
  });

  it("retention policies cover every terminal status once; failedAfter is the failed statuses", () => {
    const covered = Object.values(POLICY_STATUSES).flat();
    expect([...covered].sort()).toEqual([...TERMINAL_STATUSES].sort());
    expect(POLICY_STATUSES.failedAfter).toBe(FAILED_STATUSES);
  });

  it("cairn/client (what the dashboard imports) hands out the same lists and functions", () => {
    expect(client.RUN_STATUSES).toBe(RUN_STATUSES);
    expect(client.LIVE_STATUSES).toBe(LIVE_STATUSES);
    expect(client.TERMINAL_STATUSES).toBe(TERMINAL_STATUSES);
    expect(client.FAILED_STATUSES).toBe(FAILED_STATUSES);
    expect(client.isTerminal).toBe(isTerminal);
    expect(client.isFailed).toBe(isFailed);
  });
});
