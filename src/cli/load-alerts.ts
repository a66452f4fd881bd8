import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { parseAlertRules, type AlertRule } from "../core/alert-schemas.js";
import { ValidationError } from "../core/errors.js";
import type { AuditStore } from "../core/store.js";
import { readAlertRules, writeAlertRules } from "../server/alerts/alert-rules.js";
import { cliActor } from "./audit.js";
import { UsageError } from "./errors.js";

/**
 * Reads and validates the rules file of `cairn serve --alerts <file>`: JSON, `{ "rules": [ … ] }`.
 * @throws UsageError naming the file and each bad field (`rules.1.threshold: …`).
 * @example
 * // alerts.json
 * { "rules": [{ "name": "daily-spend", "kind": "spendPerDay", "threshold": 50 }] }
 */
export function loadAlertRules(spec: string): AlertRule[] {
  const path = resolve(spec);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new UsageError(
      `Alert rules file "${spec}" could not be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; looked at ${path}).`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(
      `Alert rules file "${spec}" is not valid JSON (${(error as Error).message}). Write { "rules": [ … ] }; see docs/operations/alerts.md.`,
    );
  }
  try {
    return parseAlertRules(value, `Alert rules file "${spec}"`);
  } catch (error) {
    if (error instanceof ValidationError) throw new UsageError((error as Error).message);
    throw error;
  }
}

/**
 * Makes the file's rules the store's rule set (audited as `alerts.rules.set` by this CLI's user),
 * unless they already are. True when they changed.
 */
export async function installAlertRules(store: Pick<AuditStore, "listAudit" | "appendAudit">, rules: AlertRule[], spec: string): Promise<boolean> {
  const current = await readAlertRules(store).catch(() => undefined);
  if (current && current.updatedAt !== null && isDeepStrictEqual(current.rules, rules)) return false;
  await writeAlertRules(store, rules, cliActor(), Date.now(), `cairn serve --alerts ${spec}`);
  return true;
}
