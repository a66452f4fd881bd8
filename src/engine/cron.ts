import { Cron } from "croner";
import type { CatchUpPolicy } from "../core/schedule.js";

/**
 * Cron arithmetic for schedules, on croner (parsing, next and previous matches in an IANA time zone).
 * DST follows croner: a local time skipped by a spring-forward change fires once at the first valid
 * time after the gap; a local time repeated by a fall-back change fires once, at its first occurrence,
 * when the expression fixes the hour (`30 2 * * *`), but twice when it matches every hour
 * (`0 * * * *` fires at 02:00 CEST and 02:00 CET): it keeps firing every real hour. See
 * docs/operations/schedules.md#daylight-saving-time.
 */

/** A parsed cron expression in a time zone. Throws croner's error for a bad expression. */
export function parseCron(expression: string, timezone: string): Cron {
  return new Cron(expression, { timezone, paused: true });
}

/** The first tick strictly after `after` (epoch ms), or null when the expression never matches again. */
export function nextTick(cron: Cron, after: number): number | null {
  const next = cron.nextRun(new Date(after));
  return next ? next.getTime() : null;
}

/** Ticks to fire in a scheduler pass, and how many missed ticks the catch-up policy dropped. */
export interface DueTicks {
  /** Ticks to fire, oldest first. */
  fire: number[];
  /** Missed ticks not fired (counted up to {@link COUNT_CAP}). */
  dropped: number;
  /** The last tick considered (the new cursor), or the old cursor when none was due. */
  cursor: number;
}

/** Counting dropped ticks stops here, so a long downtime of a per-second schedule costs bounded work. */
export const COUNT_CAP = 100_000;

/**
 * The ticks due in `(cursor, now]`. Ticks no older than `graceMs` are on time and always fire.
 * Older ones were missed (nobody ran the scheduler) and follow `catchUp`: `none` drops them, `latest`
 * fires the newest of them unless an on-time tick is due too (that one stands for them), `all` fires
 * the newest `maxCatchUp` of them (oldest first).
 */
export function dueTicks(cron: Cron, cursor: number, now: number, graceMs: number, catchUp: CatchUpPolicy, maxCatchUp: number): DueTicks {
  // Ticks at or before this are missed: more than graceMs late.
  const lateBefore = now - graceMs - 1;
  const onTime: number[] = [];
  for (let t = nextTick(cron, Math.max(cursor, lateBefore)); t !== null && t <= now; t = nextTick(cron, t)) onTime.push(t);
  const fire: number[] = [];
  let dropped = 0;
  if (cursor < lateBefore) {
    // `latest`: an on-time tick due now stands for the missed ones.
    const keep = catchUp === "none" || (catchUp === "latest" && onTime.length > 0) ? 0 : catchUp === "latest" ? 1 : maxCatchUp;
    // previousRuns: strictly before the reference, newest first.
    const kept = keep === 0 ? [] : cron.previousRuns(keep, new Date(lateBefore + 1)).map((d) => d.getTime());
    const missed = kept.filter((t) => t > cursor).reverse();
    let counted = 0;
    for (let t = nextTick(cron, cursor); t !== null && t <= lateBefore && counted < COUNT_CAP; t = nextTick(cron, t)) counted += 1;
    dropped = Math.max(0, counted - missed.length);
    fire.push(...missed);
  }
  fire.push(...onTime);
  const last = fire.length > 0 ? fire[fire.length - 1]! : undefined;
  return { fire, dropped, cursor: Math.max(cursor, last ?? cursor, dropped > 0 ? lateBefore : cursor) };
}
