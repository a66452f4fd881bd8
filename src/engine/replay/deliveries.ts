import type { Outcome } from "../execution-types.js";

/** An outcome waiting to reach workflow code. */
export interface Delivery {
  /** Its journal seq; 0 for a live outcome whose commit is still in flight. */
  seq: number;
  opKey: string;
  outcome: Outcome;
}

/** Settles an op's promise. */
export interface Waiter {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * Outcomes in journal order, handed to workflow code one at a time: the next one only once the code
 * has issued its op. Journaled outcomes are queued on resume, live ones as they are journaled.
 */
export class DeliveryQueue {
  private items: Delivery[] = [];
  private head = 0;
  private readonly queued = new Set<string>();
  /** How many outcomes have been handed over. */
  delivered = 0;
  /** The seq of the last outcome handed over (0 before the first). */
  lastSeq = 0;

  push(delivery: Delivery): void {
    this.items.push(delivery);
    this.queued.add(delivery.opKey);
  }

  /** The next outcome due, if any. */
  next(): Delivery | undefined {
    return this.items[this.head];
  }

  /** True while an outcome for this op waits in the queue. */
  has(opKey: string): boolean {
    return this.queued.has(opKey);
  }

  /** How many outcomes are still queued. */
  get remaining(): number {
    return this.items.length - this.head;
  }

  /**
   * Hands the next outcome to its op's waiter if the code has issued that op; returns it, or
   * undefined when nothing is due or its op is not issued yet.
   */
  deliverNext(issued: ReadonlySet<string>, waiters: Map<string, Waiter>): Delivery | undefined {
    const next = this.items[this.head];
    if (!next || !issued.has(next.opKey)) return undefined;
    this.items[this.head] = undefined as never;
    this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items.splice(0, this.head);
      this.head = 0;
    }
    this.queued.delete(next.opKey);
    this.delivered += 1;
    if (next.seq > 0) this.lastSeq = next.seq;
    const waiter = waiters.get(next.opKey);
    waiters.delete(next.opKey);
    if (waiter) {
      if (next.outcome.ok) waiter.resolve(next.outcome.value);
      else waiter.reject(next.outcome.error);
    }
    return next;
  }
}
