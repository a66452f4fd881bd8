/**
 * A value marked secret where it enters the journal. The journal keeps the value (replay needs it),
 * tagged `{ "$cairn": "secret", v }`; workflow code always receives the plain value, and every view
 * of the run (API, stream, CLI, dashboard) shows `"[redacted]"` in its place — and wherever its text
 * shows up again later in the run (see `core/redact.ts`).
 */
export class Secret<T = unknown> {
  /** The plain value. */
  readonly value: T;
  constructor(value: T) {
    this.value = value;
  }
  /** Never print a secret by accident. */
  toString(): string {
    return "[secret]";
  }
}

/**
 * Marks a value secret where it crosses into the journal: a step result, a run input, an event
 * payload, an `askHuman` context, a loop state. Workflow code gets the plain value back (live and on
 * replay); views of the run show `"[redacted]"` instead, and also redact any later copy of its text
 * (strings of at least {@link MIN_SECRET_LENGTH} characters).
 * @example
 * const token = await ctx.step("login", async () => secret(await login()));
 * await engine.sendEvent("thread-42", "credentials", secret({ apiKey }));
 * await ctx.askHuman({ question: "Rotate this key?", context: { key: secret(key) } });
 */
export function secret<T>(value: T): Secret<T> {
  return value instanceof Secret ? (value as Secret<T>) : new Secret(value);
}

/** True for a value made by {@link secret}. */
export function isSecret(value: unknown): value is Secret {
  return value instanceof Secret;
}

/**
 * Secret strings shorter than this are redacted only where they were marked, not wherever their
 * text appears later in the run (redacting every "ok" or "42" would hide more than it protects).
 */
export const MIN_SECRET_LENGTH = 4;
