/**
 * Every example workflow, for `createEngine({ workflows })` and for
 * `cairn worker --workflows dist/examples/index.js`.
 */
import { approval } from "./approval.js";
import { research } from "./research-agent.js";

export { approval, research };
export type { ApprovalAnswer, ApprovalInput, ApprovalResult } from "./approval.js";
export type { Finding, Review, ResearchInput, ResearchResult, SearchHit } from "./research-agent.js";

/** The workflows a worker loads from this module. */
export const workflows = [research, approval];
