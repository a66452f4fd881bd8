/** A small seeded PRNG (mulberry32): the nemesis's schedule is a function of its seed. */
export interface Rng {
  readonly seed: number;
  /** In [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
}

export function seededRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    seed,
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)]!,
  };
}

/** The seed from `CAIRN_CHAOS_SEED` (to replay a failure), else a fresh one; printed either way. */
export function chaosSeed(label: string): number {
  const given = process.env.CAIRN_CHAOS_SEED;
  const seed = given ? Number(given) : Math.floor(Math.random() * 2 ** 31);
  if (!Number.isInteger(seed)) throw new Error(`CAIRN_CHAOS_SEED must be an integer, got "${given}"`);
  console.log(`[chaos] ${label}: seed ${seed} (replay with CAIRN_CHAOS_SEED=${seed})`);
  return seed;
}
