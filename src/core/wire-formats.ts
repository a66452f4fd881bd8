import { z } from "zod";
import { runStatusSchema } from "./schemas.js";

// How values look on the HTTP API's wire: in query strings every value arrives as a string; in
// responses instants are ISO 8601 strings. Shared by the schemas of core/*-schemas.ts.

/** A whole number from `min` to `max`, given as a string. */
export function wholeNumber(min: number, max: number) {
  return z
    .string()
    .regex(/^\d{1,16}$/, "must be a whole number")
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
}

/** An instant as an ISO 8601 date-time or epoch milliseconds; parsed to epoch ms. */
export const instant = z
  .string()
  .refine((text) => /^\d{1,16}$/.test(text) || (/^\d{4}-\d\d-\d\d/.test(text) && !Number.isNaN(Date.parse(text))), {
    message: "must be an ISO 8601 date-time (2025-01-31T12:00:00Z) or epoch milliseconds",
  })
  .transform((text) => (/^\d+$/.test(text) ? Number(text) : Date.parse(text)));

/** `status=failed,cancelled` */
export const statusList = z
  .string()
  .transform((text) =>
    text
      .split(",")
      .map((part) => part.trim())
      .filter(Boolean),
  )
  .pipe(z.array(runStatusSchema).min(1, "no status given"));

/** An instant in a response: an ISO 8601 date-time string. */
export const timestamp = z.iso.datetime();
