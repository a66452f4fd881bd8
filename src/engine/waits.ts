import type { WaitDescriptor } from "../core/journal.js";

/**
 * The ops of one execution that wait on something outside the worker (a timer, an event, a child, an
 * answer, a retry's back-off), and how to launch each op again to look once more. While the run is
 * live, a timer that falls due is noticed without waiting for the run to suspend.
 */
export class Waits {
  private readonly blocked = new Map<string, WaitDescriptor>();
  private readonly launches = new Map<string, () => void>();
  private wakeTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly clock: () => number,
    /** Called when the wake timer fires. */
    private readonly onDue: () => void,
  ) {}

  /** How to launch an op again after it blocked. */
  remember(key: string, launch: () => void): void {
    this.launches.set(key, launch);
  }

  /** Forgets an op (an ended loop iteration's). */
  forget(key: string): void {
    this.launches.delete(key);
  }

  /** Marks an op as waiting; arms the wake timer for its due time, if it has one. */
  block(descriptor: WaitDescriptor): void {
    this.blocked.set(descriptor.opKey, descriptor);
    const at = "wakeAt" in descriptor ? descriptor.wakeAt : "timeoutAt" in descriptor ? descriptor.timeoutAt : null;
    if (at !== null) this.armWakeTimer(at);
  }

  /** The op's outcome arrived: it waits no more. */
  unblock(key: string): void {
    this.blocked.delete(key);
  }

  /** True when some op is blocked. */
  get any(): boolean {
    return this.blocked.size > 0;
  }

  /** The waits of the ops blocked now. */
  list(): WaitDescriptor[] {
    return [...this.blocked.values()];
  }

  /** True when some op waits for something other than time. */
  get onOthers(): boolean {
    for (const descriptor of this.blocked.values()) if (descriptor.kind !== "timer" && descriptor.kind !== "retry") return true;
    return false;
  }

  /** Launches every blocked op again so it looks once more; those whose wait is still open block again. */
  relaunch(): void {
    for (const [key, descriptor] of [...this.blocked]) {
      this.blocked.delete(key);
      const launch = this.launches.get(descriptor.opKey);
      if (launch) launch();
    }
  }

  /** Stops the wake timer (the execution ended). */
  stop(): void {
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
  }

  private armWakeTimer(at: number): void {
    const delay = at - this.clock();
    if (delay > 2_147_000_000) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = setTimeout(
      () => {
        this.wakeTimer = null;
        this.onDue();
      },
      Math.max(0, delay) + 1,
    );
    this.wakeTimer.unref();
  }
}
