import { InvalidArgumentError } from "commander";
import { z } from "zod";
import { durationSchema } from "../core/duration.js";
import { cutoffSchema } from "../core/retention-schemas.js";
import { RUN_STATUSES, type RunStatus } from "../core/run.js";

/**
 * Argument parsers for commander, built on zod. Each throws commander's
 * InvalidArgumentError, so the message names the option or argument that was
 * wrong and the process exits with the usage code.
 */

const jsonText = z.string().transform((text, ctx) => {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    ctx.addIssue({ code: "custom", message: `not valid JSON (${(error as Error).message})` });
    return z.NEVER;
  }
});

function parser<T>(schema: z.ZodType<T, string>, hint: string): (value: string) => T {
  return (value) => {
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0]?.message ?? "invalid value";
    throw new InvalidArgumentError(`${capitalize(issue)}. ${hint}`);
  };
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Parses a JSON argument, e.g. `--input '{"topic":"batteries"}'`. Quote it for your shell. */
export const jsonArg = parser(jsonText, `Pass JSON in single quotes, e.g. '{"topic":"batteries"}' or '"text"'.`);

/** Parses a whole number of at least `min`. */
export function intArg(min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  const schema = z
    .string()
    .regex(/^\s*-?\d+\s*$/, "not a whole number")
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
  return parser(schema, `Pass a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? " up" : ` to ${max}`}.`);
}

/** Parses a duration (`500`, `"30s"`, `"10m"`) to milliseconds. */
export const durationArg = parser(
  z
    .string()
    .transform((text) => (/^\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : text.trim()))
    .pipe(durationSchema),
  `For example 30s or 10m.`,
);

/**
 * Parses a duration that must carry its unit (`30d`, `12h`, `1ms`). For options where a bare number
 * is almost surely not meant as milliseconds, e.g. how long to keep finished runs: `30` would
 * otherwise prune everything that finished more than 30 ms ago.
 */
export const unitDurationArg = parser(
  z
    .string()
    .refine((text) => !/^\s*\d+(\.\d+)?\s*$/.test(text), "a bare number has no unit (it would be read as milliseconds)")
    .transform((text): string | number => text.trim())
    .pipe(durationSchema),
  `Give the unit, for example 30d, 12h or 10m.`,
);

/** Parses a cutoff: a duration before now (`30d`, `12h`) or an ISO date (`2026-01-31`, `2026-01-31T12:00:00Z`); kept as text. */
export const cutoffArg = parser(
  z.string().refine((text) => cutoffSchema.safeParse(text.trim()).success, "not a duration or a date"),
  `Use a duration before now such as 30d or 12h, or a date such as 2026-01-31.`,
);

/** Parses an ISO 8601 date-time with its zone (`2026-12-01T09:00:00Z`, `2026-12-01T10:00:00+01:00`). */
export const isoDateArg = parser(
  z
    .string()
    .transform((text) => text.trim())
    .pipe(z.iso.datetime({ offset: true, error: "not an ISO date-time with a zone" }))
    .transform((text) => new Date(text)),
  `For example 2026-12-01T09:00:00Z.`,
);

/** Parses one status or a comma-separated list (`failed,cancelled`). */
export const statusArg = parser(
  z
    .string()
    .transform((text) =>
      text
        .split(",")
        .map((part) => part.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(RUN_STATUSES as [RunStatus, ...RunStatus[]], "unknown status")).min(1, "no status given")),
  `Use one of ${RUN_STATUSES.join(", ")}, or several separated by commas.`,
);

/** Parses a non-empty identifier (run id, event type, request id). */
export function idArg(what: string): (value: string) => string {
  return parser(z.string().trim().min(1, `${what} is empty`), `Pass a non-empty ${what}.`);
}
