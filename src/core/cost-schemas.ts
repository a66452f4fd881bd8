/** Schemas of the cost figures the HTTP API answers (`GET /costs`, `GET /runs/:id/costs`), shared by the server and the client. */
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

/** The figures of a run's costs (without its id). */
const runCostFigures = {
  workerMs: z.number().describe("Time workers held the run: each claim to the release, suspension or end that followed."),
  claims: z.number().int().describe("Times a worker took the run: start, resumptions, recoveries."),
  stepMs: z.number().describe("Sum of step attempts' time from intent to outcome."),
  stepAttempts: z.number().int(),
  toolCalls: z.record(z.string(), z.number().int()).describe("Agent tool calls with an outcome, by tool name."),
  human: z
    .object({ requests: z.number().int(), pending: z.number().int(), waitMs: z.number() })
    .describe("Questions to people and the time they took (open ones up to now)."),
  journal: z
    .object({ entries: z.number().int(), bytes: z.number().int() })
    .describe("Entries and bytes of their encoded payloads (before offloading and encryption)."),
  model: z
    .object({
      modelCalls: z.number().int(),
      toolCalls: z.number().int(),
      costMicros: z.number(),
      unpricedCalls: z.number().int(),
      possiblyBilledMicros: z.number(),
      unconfirmedSends: z.number().int(),
      inFlightMicros: z.number(),
      inFlightCalls: z.number().int(),
    })
    .loose()
    .describe("Model spend in micro-dollars, as the agent transcript folds it."),
};

/** `GET /runs/:id/costs` query. */
export const runCostsQuery = z
  .object({
    includeChildren: z
      .enum(["true", "false"])
      .optional()
      .describe("true: also sum the costs of the run's child runs (and theirs) into `children.total`, as an agent's budget counts its sub-agents."),
  })
  .strict();

/** `GET /runs/:id/costs`: what a run cost beyond its model calls, beside its model spend (folded from its journal). */
export const runCostsSchema = z
  .object({
    runId: z.string(),
    ...runCostFigures,
    children: z
      .object({
        runs: z.number().int().describe("Descendant runs counted (children, grandchildren, …)."),
        childRunIds: z.array(z.string()).describe("The run's direct children, oldest first."),
        truncated: z.boolean().describe("True when the run has more than 500 descendants: the sum stops there."),
        total: z.object(runCostFigures).describe("Every figure of this run plus those of its descendants."),
      })
      .optional()
      .describe("With includeChildren=true: the run's descendants and the costs summed over the run and them."),
  })
  .describe("A run's costs. Durations in ms, sizes in bytes, money in micro-dollars.");

/** `GET /runs/:id/costs` as the client receives it. */
export type ApiRunCosts = z.output<typeof runCostsSchema>;
