/**
 * A clock that only moves when told to; pass `clock.now` to `createEngine({ clock })`.
 * @example
 * const clock = new ManualClock(Date.UTC(2026, 0, 1));
 * const engine = await createEngine({ store: "memory:", workflows, clock: clock.now });
 * clock.advance("72h");
 */
import { toMs, type Duration } from "../core/duration.js";

export class ManualClock {
  private current: number;
  constructor(start: number = Date.UTC(2030, 0, 1)) {
    this.current = start;
  }
  /** The current time in epoch ms (bound, so it can be passed around). */
  readonly now = (): number => this.current;
  /** Moves time forward. */
  advance(by: Duration): number {
    this.current += toMs(by);
    return this.current;
  }
  /** Sets the time. */
  set(to: number | Date): void {
    this.current = +to;
  }
}
