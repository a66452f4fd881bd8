import type { ApiAlert, ApiRun } from "cairn/client";

/** A run as `GET /overview` lists it: no payloads, its error message cut short. */
export type OverviewRun = Pick<
  ApiRun,
  "runId" | "workflow" | "version" | "status" | "parentRunId" | "entries" | "createdAt" | "updatedAt" | "finishedAt" | "waitingFor"
> & {
  error?: { name: string; message: string; code?: string };
};

/** The answer of `GET /overview` (see src/server/overview/summary.ts). */
export interface OverviewSummary {
  since: string;
  generatedAt: string;
  counts: { total: number; byStatus: Record<string, number> };
  failures: {
    scanned: number;
    truncated: boolean;
    patterns: { pattern: string; count: number; workflows: string[]; exampleRunId: string; example: string }[];
    steps: { workflow: string; step: string; count: number; lastRunId: string; lastAt: string; lastError: string }[];
  };
  spend: {
    modelCalls: number;
    inputTokens: number;
    outputTokens: number;
    costMicros: number;
    truncated: boolean;
    byWorkflow: { workflow: string; runs: number; modelCalls: number; tokens: number; costMicros: number }[];
    topRuns: { runId: string; workflow: string; costMicros: number; tokens: number; children: number }[];
  };
  slowest: OverviewRun[];
  stuck: OverviewRun[];
  human: { pending: number; pendingCapped: boolean; answered: number; medianWaitMs: number | null; longestWaitMs: number | null; timedOut: number };
  workers: number;
  /** The newest alerts; null for a namespaced token; absent from servers without alerts. */
  alerts?: ApiAlert[] | null;
}
