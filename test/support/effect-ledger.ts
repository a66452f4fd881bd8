/** Counts executions of each step function by idempotency key (in-process tests of exactly-once replay). */
export function ledger() {
  const runs = new Map<string, number>();
  return {
    runs,
    effect<T>(key: string, value: T): T {
      runs.set(key, (runs.get(key) ?? 0) + 1);
      return value;
    },
    get maxPerKey() {
      return Math.max(0, ...runs.values());
    },
  };
}
