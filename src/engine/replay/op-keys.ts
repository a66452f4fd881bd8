import { ValidationError } from "../../core/errors.js";
import { opKey, type OpKind } from "../../core/journal.js";

/** Where ops are issued: the workflow itself, or one iteration of a loop. */
export interface Scope {
  /** "" for the workflow; `<loopKey>/<iteration>/` inside a loop's iteration. */
  readonly prefix: string;
  readonly counters: Map<string, number>;
  /** Keys issued in this scope, forgotten when the iteration ends (not tracked for the workflow scope). */
  readonly keys: string[] | null;
}

/** The workflow's own scope. */
export function rootScope(): Scope {
  return { prefix: "", counters: new Map(), keys: null };
}

/** The scope of one iteration of the loop at `loopKey`. */
export function iterationScope(loopKey: string, iteration: number): Scope {
  return { prefix: `${loopKey}/${iteration}/`, counters: new Map(), keys: [] };
}

/**
 * The next op key for `name` in `scope`: `<prefix><name>#<occurrence>`. Refuses names that are not
 * non-empty strings, and names with `/`, which separates a loop's iterations in op keys.
 */
export function nextOpKey(scope: Scope, name: unknown, kind: OpKind): string {
  if (typeof name !== "string" || name.length === 0) {
    throw new ValidationError(`Op names must be non-empty strings (got ${JSON.stringify(name)} for a ${kind}).`);
  }
  if (name.includes("/")) {
    throw new ValidationError(`Op name "${name}" contains "/", which separates a loop's iterations in op keys: use another character.`);
  }
  const occurrence = scope.counters.get(name) ?? 0;
  scope.counters.set(name, occurrence + 1);
  const key = scope.prefix + opKey(name, occurrence);
  scope.keys?.push(key);
  return key;
}

/** The key the last op named `name` in `scope` was issued under (an acquisition's, for its handle). */
export function lastOpKey(scope: Scope, name: string): string {
  return scope.prefix + opKey(name, (scope.counters.get(name) ?? 1) - 1);
}
