/**
 * Every example workflow, for `createEngine({ workflows })` and for
 * `cairn worker --workflows dist/examples/index.js`.
 */
import { approval } from "./approval.js";
import { codeMigration, codeMigrator } from "./code-migration.js";
import { research, researcher } from "./research-agent.js";

export { approval, codeMigration, codeMigrator, research, researcher };
export type { ApprovalAnswer, ApprovalInput, ApprovalResult } from "./approval.js";
export type { BatchOutcome, CheckFailure, CheckReport, MigrationInput, MigrationResult } from "./code-migration.js";
export type { ResearchInput, ResearchResult, SearchHit } from "./research-agent.js";

/** The workflows a worker loads from this module: agents run as child runs, so they are registered too. */
export const workflows = [research, researcher, approval, codeMigration, codeMigrator];
