import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir, testEngine } from "../../test/support/engines.js";
import { readAlertRules } from "../server/alerts/alert-rules.js";
import { UsageError } from "./errors.js";
import { installAlertRules, loadAlertRules } from "./load-alerts.js";

function file(text: string): string {
  const path = join(tempDir(), "alerts.json");
  writeFileSync(path, text);
  return path;
}

const refusal = (spec: string) => {
  try {
    loadAlertRules(spec);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error("expected a UsageError");
};

describe("cairn serve --alerts <file>", () => {
  it("refuses a missing file, bad JSON and a bad rule with a message naming the file and the field", () => {
    expect(refusal("/nonexistent/alerts.json")).toContain('Alert rules file "/nonexistent/alerts.json" could not be read (ENOENT');
    const broken = file("{ rules: [");
    expect(refusal(broken)).toContain(`Alert rules file "${broken}" is not valid JSON`);
    const bad = file(
      JSON.stringify({
        rules: [
          { name: "day", kind: "spendPerDay", threshold: 50 },
          { name: "rate", kind: "failureRate", threshold: 20 },
        ],
      }),
    );
    expect(refusal(bad)).toBe(
      `Alert rules file "${bad}": rules.1.threshold: must be a fraction of at most 1, such as 0.2 for 20%. A rule set is { "rules": [{ "name", "kind", "threshold", … }] }; see docs/operations/alerts.md.`,
    );
  });

  it("installs the file's rules on the store once (audited), and again only when they change", async () => {
    const engine = await testEngine("sqlite");
    const spec = file(JSON.stringify({ rules: [{ name: "day", kind: "spendPerDay", threshold: 50 }] }));
    const rules = loadAlertRules(spec);
    expect(await installAlertRules(engine.store, rules, spec)).toBe(true);
    expect(await installAlertRules(engine.store, loadAlertRules(spec), spec)).toBe(false);
    const stored = await readAlertRules(engine.store);
    expect(stored).toMatchObject({ rules: [{ name: "day", kind: "spendPerDay", threshold: 50 }], source: `cairn serve --alerts ${spec}` });
    expect(stored.updatedBy).toMatch(/^cli:/);
    writeFileSync(spec, JSON.stringify({ rules: [] }));
    expect(await installAlertRules(engine.store, loadAlertRules(spec), spec)).toBe(true);
    expect((await readAlertRules(engine.store)).rules).toEqual([]);
    expect(await engine.store.listAudit({ action: "alerts.rules.set", limit: 10 })).toHaveLength(2);
  });
});
