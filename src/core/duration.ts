import { z } from "zod";

/** A duration: milliseconds as a number, or a string such as `"250ms"`, `"10s"`, `"10m"`, `"72h"`, `"7d"`. */
export type Duration = number | `${number}${DurationUnit}`;
/** Units accepted in a duration string. */
export type DurationUnit = "ms" | "s" | "m" | "h" | "d";

const UNIT_MS: Record<DurationUnit, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PATTERN = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)$/;

/** Zod schema for a {@link Duration}; parses to milliseconds. */
export const durationSchema = z
  .union([z.number().finite().nonnegative(), z.string().regex(PATTERN, 'use a number of ms or a string like "250ms", "10s", "10m", "72h", "7d"')])
  .transform((value) => (typeof value === "number" ? value : toMsUnchecked(value)));

function toMsUnchecked(text: string): number {
  const match = PATTERN.exec(text.trim());
  if (!match) return Number.NaN;
  return Math.round(Number(match[1]) * UNIT_MS[match[2] as DurationUnit]);
}

/**
 * Converts a {@link Duration} to milliseconds.
 * @throws TypeError naming the bad value when it is neither a non-negative number nor a duration string.
 * @example toMs("10m") // 600000
 */
export function toMs(duration: Duration | string): number {
  const ms = typeof duration === "number" ? duration : toMsUnchecked(duration);
  if (!Number.isFinite(ms) || ms < 0) {
    throw new TypeError(`Invalid duration ${JSON.stringify(duration)}: use a non-negative number of ms or a string like "250ms", "10s", "10m", "72h", "7d".`);
  }
  return ms;
}

/** Formats milliseconds for people: `1500` → `"1.5s"`. */
export function formatMs(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${+(ms / 1_000).toFixed(1)}s`;
  if (ms < 3_600_000) return `${+(ms / 60_000).toFixed(1)}m`;
  if (ms < 86_400_000) return `${+(ms / 3_600_000).toFixed(1)}h`;
  return `${+(ms / 86_400_000).toFixed(1)}d`;
}
