import type { z } from "zod";
import { ValidationError } from "../core/errors.js";
import { describeIssues } from "../core/schemas.js";

/** Parses `value` with `schema`, or throws a ValidationError that starts with `what` and names each issue. */
export function check<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new ValidationError(`${what}: ${describeIssues(parsed.error)}`);
  }
  return parsed.data;
}
