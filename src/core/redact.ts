import type { EntryData, EntryKind } from "./journal.js";

/** What a secret value looks like in journal views, streams and the CLI. */
export const REDACTED = "[redacted]";

/**
 * The data of a journal entry as people may see it: a step marked `secret` keeps its real result in
 * the journal (replay needs it), but every view of the journal (`engine.journal`, the HTTP journal
 * route and stream, `cairn show`) shows {@link REDACTED} instead, and drops its search text.
 * The one place where redaction happens; everything that shows entries goes through it.
 */
export function redactEntryData(kind: EntryKind, data: unknown): unknown {
  if (kind === "step.completed") {
    const completed = data as EntryData["step.completed"];
    if (!completed.secret) return data;
    const { text: _text, ...rest } = completed;
    return { ...rest, result: REDACTED };
  }
  return data;
}
