import type { EntryData, JournalEntry } from "../../core/journal.js";
import { TERMINAL_STATUSES_SQL } from "../../core/run.js";
import { decode } from "../../core/serialize.js";

/**
 * Tables whose rows belong to one run (column `run_id`), deleted with it by `Store.deleteRuns`, children
 * first. A migration that adds another per-run table adds it here too; one that references `runs`
 * with a foreign key makes a forgotten table fail the prune loudly instead of leaving orphans.
 */
export const PER_RUN_TABLES = [
  "journal_text",
  "journal",
  "inbox",
  "human_requests",
  "outbox",
  "run_tags",
  "run_values",
  "run_deadlines",
  "agent_messages",
  "tool_calls",
  "journal_compactions",
] as const;

/** `r.run_id` without its trailing digits (`t~` for `t~12`). */
const TRIMMED = "rtrim(r.run_id, '0123456789')";
/** `chainBase(r.run_id)` (core/run.ts) in SQL both stores speak: the id before a trailing `~<digits>`. */
const CHAIN_BASE = `(CASE WHEN ${TRIMMED} <> r.run_id AND length(${TRIMMED}) > 1 AND substr(${TRIMMED}, length(${TRIMMED}), 1) = '~'
  THEN substr(${TRIMMED}, 1, length(${TRIMMED}) - 1) ELSE r.run_id END)`;
/** The checkpoint kinds as an SQL list, matching the partial index `journal_checkpoint_idx` (migration 0003). */
export const CHECKPOINT_KINDS_SQL = "('loop.snapshot', 'loop.completed')";

/**
 * SQL condition on `runs AS r`: a terminal run whose parent (if any) is finished or gone, whose
 * children are all finished, whose outbox messages are all delivered or dead, and, when it continued
 * as new, whose chain has no live run. A child is kept while its parent may still read its row; a
 * parent is kept while a child may still wake it; a run is kept while a message of its is still to be
 * delivered; a continued run is kept while events sent to its id are passed along the chain to a live
 * run (`Store.sendEvent`), so that id keeps reaching it (the chain's runs are `<base>~<n>`: any live run
 * with such an id keeps it, which errs on keeping). Uses no parameters, so both SQL stores share it.
 */
export const PRUNABLE_SQL = `r.status IN ${TERMINAL_STATUSES_SQL}
  AND NOT EXISTS (SELECT 1 FROM runs p WHERE p.run_id = r.parent_run_id AND p.status NOT IN ${TERMINAL_STATUSES_SQL})
  AND NOT EXISTS (SELECT 1 FROM runs c WHERE c.parent_run_id = r.run_id AND c.status NOT IN ${TERMINAL_STATUSES_SQL})
  AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.run_id = r.run_id AND o.status = 'pending')
  AND NOT (EXISTS (SELECT 1 FROM journal j WHERE j.run_id = r.run_id AND j.seq = r.last_seq AND j.kind = 'run.continued')
    AND EXISTS (SELECT 1 FROM runs n WHERE n.run_id >= ${CHAIN_BASE} || '~' AND n.run_id < ${CHAIN_BASE} || '~~'
      AND n.status NOT IN ${TERMINAL_STATUSES_SQL}))`;

/** The full-text index rows of a journal: `step.completed` entries with search text. */
export function journalTexts(journal: readonly JournalEntry[]): { seq: number; opKey: string; text: string }[] {
  const texts: { seq: number; opKey: string; text: string }[] = [];
  for (const entry of journal) {
    if (entry.kind !== "step.completed") continue;
    const text = decode<EntryData["step.completed"]>(entry.payload)?.text;
    if (typeof text === "string") texts.push({ seq: entry.seq, opKey: entry.opKey ?? "", text });
  }
  return texts;
}
