import { describe, expect, it } from "vitest";
import { parseAlertRules } from "./alert-schemas.js";

const error = (value: unknown) => {
  try {
    parseAlertRules(value, "alerts.json");
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected a ValidationError");
};

describe("alert rules", () => {
  it("fill in defaults and read durations as ms", () => {
    expect(
      parseAlertRules(
        {
          rules: [
            { name: "run", kind: "spendPerRun", threshold: 2.5 },
            { name: "wf", kind: "spendPerWorkflow", threshold: 10, window: "6h", workflow: "research" },
            { name: "day", kind: "spendPerDay", threshold: 50 },
            { name: "fail", kind: "failureRate", threshold: 0.2 },
            { name: "stuck", kind: "stuckRuns" },
            { name: "wait", kind: "humanWaiting", threshold: "4h" },
          ],
        },
        "test",
      ),
    ).toEqual([
      { name: "run", kind: "spendPerRun", threshold: 2.5, window: 86_400_000 },
      { name: "wf", kind: "spendPerWorkflow", threshold: 10, window: 6 * 3_600_000, workflow: "research" },
      { name: "day", kind: "spendPerDay", threshold: 50 },
      { name: "fail", kind: "failureRate", threshold: 0.2, window: 3_600_000, minRuns: 10 },
      { name: "stuck", kind: "stuckRuns", threshold: 1, window: 3_600_000 },
      { name: "wait", kind: "humanWaiting", threshold: 4 * 3_600_000 },
    ]);
  });

  it("refuse a bad rule set with an error naming the file, each bad field and what to write", () => {
    expect(error({ rules: [{ name: "y", kind: "costs", threshold: 1 }] })).toMatch(
      /^alerts\.json: rules\.0\.kind: must be one of spendPerRun, spendPerWorkflow, spendPerDay, failureRate, stuckRuns, humanWaiting/,
    );
    const many = error({ rules: [{ name: "a b", kind: "failureRate", threshold: 2, window: "5x" }] });
    expect(many).toContain("rules.0.name: use 1–64 letters");
    expect(many).toContain("rules.0.threshold: must be a fraction of at most 1");
    expect(many).toContain('rules.0.window: use a number of ms or a string like "250ms"');
    expect(error({ rules: [{ name: "w", kind: "spendPerWorkflow", threshold: 1, window: "10s" }] })).toContain(
      'rules.0.window: must be a duration between "1m" and "31d"',
    );
    expect(
      error({
        rules: [
          { name: "a", kind: "humanWaiting", threshold: "soon" },
          { name: "b", kind: "stuckRuns", extra: 1 },
        ],
      }),
    ).toMatch(/rules\.0\.threshold: must be a wait .*"4h".*rules\.1: Unrecognized key: "extra"/);
    expect(error({ rules: [{ name: "a", kind: "humanWaiting", threshold: 500 }] })).toContain('rules.0.threshold: must be a wait of at least "1s"');
    expect(
      error({
        rules: [
          { name: "a", kind: "stuckRuns" },
          { name: "a", kind: "spendPerDay", threshold: 1 },
        ],
      }),
    ).toContain('rules.1.name: "a" is used by an earlier rule; give each rule its own name');
    expect(error({ rules: "all" })).toContain("rules: ");
    expect(error([])).toContain('A rule set is { "rules": [');
    expect(error({ rules: [{ name: "x", kind: "spendPerDay" }] })).toContain("rules.0.threshold: must be an amount in US dollars");
  });
});
