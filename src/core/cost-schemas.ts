/** Schemas of the cost figures the HTTP API answers (`GET /costs`), shared by the server and the client. */
import { z } from "zod";

const totalsSchema = z.object({
  workflow: z.string(),
  runs: z.number().int(),
  workerMs: z.number(),
  claims: z.number().int(),
  stepMs: z.number(),
  stepAttempts: z.number().int(),
  toolCalls: z.record(z.string(), z.number().int()),
  human: z.object({ requests: z.number().int(), pending: z.number().int(), waitMs: z.number() }),
  journal: z.object({ entries: z.number().int(), bytes: z.number().int() }),
  model: z.object({
    modelCalls: z.number().int(),
    costMicros: z.number(),
    unpricedCalls: z.number().int(),
    possiblyBilledMicros: z.number(),
    usage: z
      .object({
        inputTokens: z.number().int(),
        outputTokens: z.number().int(),
        cacheReadTokens: z.number().int(),
        cacheWriteTokens: z.number().int(),
        reasoningTokens: z.number().int(),
      })
      .describe("Tokens of the journaled model responses."),
  }),
});

/** What `GET /costs` answers. */
export const costsResponse = z
  .object({
    since: z.string(),
    until: z.string(),
    runs: z.number().int().describe("Runs whose costs were added up (at most 2,000, newest first)."),
    truncated: z.boolean().describe("The window held more runs than were read."),
    workflows: z.array(totalsSchema).describe("By workflow, most worker time first."),
  })
  .describe("Costs per workflow over the runs created in a window. Durations in ms, sizes in bytes, money in micro-dollars.");

/** `GET /costs` as the client receives it. */
export type ApiCostTotals = z.output<typeof costsResponse>;
