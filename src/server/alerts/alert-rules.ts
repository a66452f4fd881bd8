/**
 * Where the alert rules live: in the audit log. Each change appends an `alerts.rules.set` entry
 * (target `alerts.rules`) holding the whole rule set; the current rules are the newest such entry's.
 * So every server on the store sees one rule set, and every change is audited by construction.
 */
import { parseAlertRules, type AlertRule } from "../../core/alert-schemas.js";
import type { AuditStore } from "../../core/store.js";

/** The audit action of a rule change. */
export const ALERT_RULES_ACTION = "alerts.rules.set";
/** The audit target of every rule change (indexed, so the newest is one lookup). */
export const ALERT_RULES_TARGET = "alerts.rules";

/** The current rule set and who set it. */
export interface StoredAlertRules {
  rules: AlertRule[];
  /** When they were set; null when no rules were ever set. */
  updatedAt: Date | null;
  /** The audit actor who set them (`token:<name>`, `cli:<user>`), or null. */
  updatedBy: string | null;
  /** Where they came from when not the API (`cairn serve --alerts <file>`), or null. */
  source: string | null;
}

/** Reads the current rules (none when never set). Throws ValidationError if the stored set no longer validates. */
export async function readAlertRules(store: Pick<AuditStore, "listAudit">): Promise<StoredAlertRules> {
  const [entry] = await store.listAudit({ target: ALERT_RULES_TARGET, action: ALERT_RULES_ACTION, limit: 1 });
  if (!entry) return { rules: [], updatedAt: null, updatedBy: null, source: null };
  const detail = entry.detail ?? {};
  return {
    rules: parseAlertRules({ rules: detail.rules }, `the alert rules set by ${entry.actor}`),
    updatedAt: new Date(entry.at),
    updatedBy: entry.actor,
    source: typeof detail.source === "string" ? detail.source : null,
  };
}

/** Replaces the rule set (already validated), recording who did it. */
export async function writeAlertRules(
  store: Pick<AuditStore, "appendAudit">,
  rules: readonly AlertRule[],
  actor: string,
  now: number,
  source: string | null = null,
): Promise<StoredAlertRules> {
  const detail = source === null ? { rules } : { rules, source };
  const entry = await store.appendAudit({ at: now, actor, action: ALERT_RULES_ACTION, target: ALERT_RULES_TARGET, detail });
  return { rules: [...rules], updatedAt: new Date(entry.at), updatedBy: entry.actor, source };
}
