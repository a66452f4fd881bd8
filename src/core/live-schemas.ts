import { z } from "zod";
import { eventIdSchema, runIdSchema } from "./schemas.js";
import { tagsSchema } from "./tags.js";

/** HTTP API schemas of live runs (docs/live-runs.md): tags, deadlines and delayed starts, published values, requests. */

const durationText = z
  .union([z.number().int().min(0).max(315_360_000_000), z.string().regex(/^\d+(\.\d+)?(ms|s|m|h|d)$/, 'a number of ms or a string like "10m", "2h", "7d"')])
  .describe('A duration: ms, or a string like "10m", "2h", "7d".');

/** Fields `POST /runs` accepts for live runs. */
export const liveStartFields = {
  tags: tagsSchema.optional().describe("Tags ({ customer: 'acme' }): at most 16; indexed, filterable with GET /runs?tag=key:value, inherited by children."),
  deadline: durationText.optional().describe("Cancel the run (reason deadline, compensating) when this long has passed since its start."),
  startAt: z.iso.datetime().optional().describe("Start the run at this time (a durable timer). Not with delay."),
  delay: durationText.optional().describe("Start the run after this long. Not with startAt."),
};

/** A published value or request handler name. */
export const liveNameSchema = z
  .string()
  .min(1, "must not be empty")
  .max(128, "must be at most 128 characters")
  .regex(/^[^/\p{Cc}]+$/u, 'must not contain "/" or control characters');

/** Path of `GET /runs/:id/values/:name` and `POST /runs/:id/requests/:name`. */
export const runNameParam = z.object({ id: runIdSchema, name: liveNameSchema });

/** `GET /runs/:id/values/:name` answer. */
export const publishedValueResponse = z.object({
  name: z.string(),
  value: z.unknown(),
  seq: z.number().int().describe("The journal seq of the publish."),
  at: z.iso.datetime(),
});

/** `POST /runs/:id/requests/:name` */
export const requestBody = z
  .object({
    payload: z.unknown().optional(),
    requestId: eventIdSchema.optional().describe("Idempotency key: a request with an id the run already answered gets that reply again. Default: generated."),
    timeoutMs: z.number().int().min(0).max(300_000).optional().describe("How long to wait for the reply; default 30000, at most 300000."),
  })
  .strict();

/** `POST /runs/:id/requests/:name` answer. */
export const requestResponse = z.object({ requestId: z.string(), reply: z.unknown() });
