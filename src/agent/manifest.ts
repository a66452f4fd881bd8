import { createHash } from "node:crypto";
import { CairnError } from "../core/errors.js";
import { PRICE_TABLE } from "./model/prices.js";
import type { ToolSpec } from "./model/schemas.js";
import { canonicalJson } from "./tool.js";

/**
 * What an agent run was started with, journaled as its first step. A resume under code whose
 * manifest differs is refused (with the differences) unless the agent declares a migration.
 */
export interface AgentManifest {
  agent: string;
  version: string;
  /** `sha256:<hex>` of the system prompt, or null without one. */
  systemHash: string | null;
  /** Tool name → `sha256:<hex>` of its spec (name, description, input schema). */
  tools: Record<string, string>;
  model: string;
  priceTable: string;
  /**
   * The run's budget limits (the agent's, tightened by limits a parent passed down), journaled with
   * the manifest so views can show spend against them (the dashboard's budget gauge). Informational:
   * not compared on resume. Absent in runs started before it was recorded.
   */
  budget?: BudgetLimits;
}

/** Budget limits as journaled in the manifest; null where the budget sets none. */
export interface BudgetLimits {
  maxCostMicros: number | null;
  /** Token ceilings by kind (`input`, `output`, `cacheRead`, `cacheWrite`, `reasoning`, `total`), where set. */
  maxTokens: Record<string, number>;
  maxSteps: number | null;
  maxToolCalls: number | null;
  maxWallTimeMs: number | null;
  /** Cost tiers that need a person's approval, in micro-dollars. */
  tiersMicros: number[];
}

/** One difference between two manifests. */
export interface ManifestChange {
  field: string;
  was: unknown;
  now: unknown;
}

const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

/** The manifest of an agent as the code defines it now. */
export function makeManifest(agent: string, version: string, system: string | undefined, tools: ToolSpec[], model: string): AgentManifest {
  return {
    agent,
    version,
    systemHash: system === undefined ? null : sha256(system),
    tools: Object.fromEntries(tools.map((spec) => [spec.name, sha256(canonicalJson(spec))])),
    model,
    priceTable: PRICE_TABLE.version,
  };
}

/** The fields that differ, tool by tool. */
export function diffManifests(was: AgentManifest, now: AgentManifest): ManifestChange[] {
  const changes: ManifestChange[] = [];
  for (const field of ["agent", "version", "systemHash", "model", "priceTable"] as const) {
    if (was[field] !== now[field]) changes.push({ field, was: was[field], now: now[field] });
  }
  for (const name of new Set([...Object.keys(was.tools), ...Object.keys(now.tools)])) {
    if (was.tools[name] !== now.tools[name]) changes.push({ field: `tools.${name}`, was: was.tools[name] ?? null, now: now.tools[name] ?? null });
  }
  return changes;
}

/** A run resumed under an agent definition that differs from the one it started with. */
export class ManifestChangedError extends CairnError {
  readonly nonRetryable = true;
  constructor(
    readonly runId: string,
    readonly changes: ManifestChange[],
  ) {
    super(
      "MANIFEST_CHANGED",
      `Run "${runId}" started under a different agent definition: ${changes
        .map((c) => `${c.field} was ${JSON.stringify(c.was)}, is now ${JSON.stringify(c.now)}`)
        .join(
          "; ",
        )}. Keep the old definition registered (under its version) until its runs finish, or declare a migration in defineAgent({ migrate }) that accepts these changes.`,
    );
  }
}
