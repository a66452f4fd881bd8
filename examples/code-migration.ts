/**
 * The code-migration agent of the design: move a repository of JavaScript files from the
 * callback-era `legacy-http` client to `modern-http`, with people in charge of the risky moments.
 *
 * analyze (list the files) → plan (batches) → a person reviews the plan → for each batch, the
 * {@link codeMigrator} agent migrates the files (in parallel), runs the check, auto-fixes what
 * fails (a bounded number of rounds) → the workflow re-checks, and escalates to a person when the
 * batch still fails → a person signs the whole migration off.
 *
 * The tools write real files. `migrate_file` is not idempotent by itself (a second run would stamp
 * a second `// migrated-by:` line), so it declares `reconcile`: after a crash between its intent and
 * its outcome, the file itself says whether the migration happened, and it is never done twice.
 *
 * The model is a real one when `ANTHROPIC_API_KEY` or `OPENAI_API_KEY` is set, else the scripted
 * {@link migrationModel}, which makes the example deterministic.
 *
 * @example
 * seedRepository("/tmp/repo");
 * const run = await engine.start(codeMigration, { dir: "/tmp/repo", batchSize: 2 }, { runId: "migrate-1" });
 * // The run asks, in turn (answer with engine.respondToHuman or `cairn answer <requestId> <option>`):
 * //   migrate-1:plan-review#0  approve | reject
 * //   migrate-1:escalate#0     fixed | accept | abort   (only when a batch still fails after auto-fix)
 * //   migrate-1:sign-off#0     approve | reject
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { isAbsolute, join, relative } from "node:path";
import { defineWorkflow, ValidationError } from "cairn";
import {
  defineAgent,
  defineTool,
  modelFromEnv,
  ScriptedModel,
  textOf,
  type JsonValue,
  type ModelRequest,
  type ScriptedReply,
  type ToolUseBlock,
} from "cairn/agent";
import { z } from "zod";
import { recordEffect } from "./ledger.js";
import { STEP_MS_ENV } from "./research-agent.js";

/** Input of the code-migration workflow. */
export interface MigrationInput {
  /** The repository to migrate: an absolute directory; every `*.js` file under it is migrated. */
  dir: string;
  /** Files per batch. Default 2. */
  batchSize?: number;
  /** Auto-fix rounds per batch before a person is asked. Default 2. */
  maxFixRounds?: number;
}

/** One file the check rejects, and why. */
export interface CheckFailure {
  file: string;
  problem: string;
}

/** What `run_check` returns. */
export interface CheckReport {
  passed: string[];
  failing: CheckFailure[];
}

/** How one batch ended. */
export interface BatchOutcome {
  files: string[];
  /** `passed`: the agent's migration (and auto-fixes) pass; `fixed-by-hand`: a person fixed it; `accepted-failing`: a person accepted it as it is. */
  outcome: "passed" | "fixed-by-hand" | "accepted-failing";
  /** Auto-fix calls the agent made. */
  fixes: number;
  escalations: number;
}

/** What the code-migration workflow returns. */
export interface MigrationResult {
  /** `signed-off`: done and approved; `plan-rejected`, `aborted` (at an escalation) and `rejected` (at sign-off) stop it. */
  status: "signed-off" | "rejected" | "plan-rejected" | "aborted";
  files: string[];
  batches: BatchOutcome[];
  /** Who answered the last question. */
  decidedBy: string | null;
}

/** The options of each question the workflow asks. */
export const MIGRATION_OPTIONS = {
  planReview: ["approve", "reject"],
  escalate: ["fixed", "accept", "abort"],
  signOff: ["approve", "reject"],
} as const;

const MARKER = "// migrated-by: ";

// ── the repository, the migration and the check (plain functions; the tools wrap them) ───────

/** The sample repository of the example: five files, one needing an auto-fix and one a person. */
export const SAMPLE_FILES: Record<string, string> = {
  "src/orders.js": `import { get } from "legacy-http";\n\nexport const loadOrder = (id) => get(\`/orders/\${id}\`);\n`,
  "src/users.js": `import { get } from "legacy-http";\n\nexport const loadUser = (id) => get(\`/users/\${id}\`);\n`,
  "src/invoices.js": `import { get, retryGet } from "legacy-http";\n\nexport const loadInvoice = (id) => retryGet(\`/invoices/\${id}\`, 3);\n`,
  "src/reports.js": `import { get, getSync } from "legacy-http";\n\nexport const loadReport = (id) => getSync(\`/reports/\${id}\`);\n`,
  "src/search.js": `import { get } from "legacy-http";\n\nexport const search = (q) => get(\`/search?q=\${encodeURIComponent(q)}\`);\n`,
};

/** Writes {@link SAMPLE_FILES} under `dir` (creating it). */
export function seedRepository(dir: string): void {
  for (const [file, text] of Object.entries(SAMPLE_FILES)) {
    mkdirSync(join(dir, file, ".."), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
}

/** Every `*.js` file under `dir`, relative and sorted (a stable plan on every worker). */
export function listSourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".js"))
    .map((file) => file.split("\\").join("/"))
    .sort();
}

/** Replaces a file all at once (write a temporary file, then rename): a crash leaves the old or the new text, never half of one. */
function replaceFile(path: string, text: string): void {
  const temporary = `${path}.${randomUUID()}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

/** The migration: imports and plain `get(url)` calls. It knows neither `retryGet` nor `getSync`. */
export function migrateSource(text: string): string {
  return text
    .replace(/import \{([^}]*)\} from "legacy-http";/, (_, names: string) => {
      const rest = names
        .split(",")
        .map((n) => n.trim())
        .filter((n) => n !== "" && n !== "get");
      return `import { ${["request", ...rest].join(", ")} } from "modern-http";`;
    })
    .replace(/\bget\(/g, 'request("GET", ');
}

/** The check ("the tests"): no legacy import and no legacy call may remain. */
export function checkSource(text: string): string | null {
  if (text.includes('"legacy-http"')) return "still imports legacy-http";
  if (/\bretryGet\(/.test(text)) return "calls retryGet, which modern-http does not have (use request with { retries })";
  if (/\bgetSync\(/.test(text)) return "calls getSync: modern-http has no synchronous calls, the caller must become async";
  if (/\bget\(/.test(text)) return "calls the legacy get()";
  if (/import \{[^}]*\b(retryGet|getSync)\b[^}]*\} from "modern-http"/.test(text)) return "imports a legacy name from modern-http";
  return null;
}

/** The auto-fix: rewrites what it can (`retryGet(url, n)`); `getSync` needs a person. */
export function fixSource(text: string): string {
  const fixed = text.replace(/\bretryGet\(([^,]+), (\d+)\)/g, 'request("GET", $1, { retries: $2 })');
  if (/\bretryGet\(/.test(fixed)) return fixed;
  return fixed.replace(/import \{([^}]*)\} from "modern-http";/, (_, names: string) => {
    const kept = names
      .split(",")
      .map((n) => n.trim())
      .filter((n) => n !== "" && n !== "retryGet");
    return `import { ${kept.join(", ")} } from "modern-http";`;
  });
}

/** Checks files of a repository. */
export function checkFiles(dir: string, files: readonly string[]): CheckReport {
  const report: CheckReport = { passed: [], failing: [] };
  for (const file of files) {
    const problem = checkSource(readFileSync(join(dir, file), "utf8"));
    if (problem === null) report.passed.push(file);
    else report.failing.push({ file, problem });
  }
  return report;
}

function stepMs(): number {
  const value = Number(process.env[STEP_MS_ENV] ?? 0);
  return Number.isFinite(value) && value > 0 ? value : 0;
}

const slow = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, stepMs()));

const fileInput = z.object({
  dir: z.string().describe("The repository directory (absolute)."),
  file: z.string().describe("The file, relative to the repository."),
});

function pathOf({ dir, file }: z.infer<typeof fileInput>): string {
  if (!isAbsolute(dir)) throw new ValidationError(`The repository directory must be absolute, not ${JSON.stringify(dir)}.`);
  const path = join(dir, file);
  if (relative(dir, path).startsWith("..") || !file.endsWith(".js")) throw new ValidationError(`${JSON.stringify(file)} is not a .js file inside ${dir}.`);
  return path;
}

// ── the tools ────────────────────────────────────────────────────────────────

/**
 * Migrates one file and stamps it with the call's idempotency key. Not idempotent by itself: its
 * `reconcile` reads the stamp, so a call interrupted by a crash is never applied twice. Each real
 * migration appends `migrate <file> <key>` to the example ledger.
 */
export const migrateFileTool = defineTool({
  name: "migrate_file",
  description: "Migrates one file from legacy-http to modern-http (imports and get() calls) and stamps it as migrated.",
  input: fileInput,
  effect: "idempotent",
  async run(args, { idempotencyKey }) {
    await slow();
    const path = pathOf(args);
    const text = readFileSync(path, "utf8");
    replaceFile(path, `${migrateSource(text)}${MARKER}${idempotencyKey}\n`);
    recordEffect(`migrate ${args.file} ${idempotencyKey}`);
    return `migrated ${args.file}`;
  },
  reconcile(args, idempotencyKey) {
    const done = readFileSync(pathOf(args), "utf8").includes(`${MARKER}${idempotencyKey}\n`);
    return done ? { done: true, value: `migrated ${args.file}` } : { done: false };
  },
});

/** Runs the check on some files of the repository. No effect: safe to run again. */
export const runCheckTool = defineTool({
  name: "run_check",
  description: "Runs the migration check on files and reports which pass and which fail, with the problem.",
  input: z.object({ dir: z.string(), files: z.array(z.string()).min(1) }),
  effect: "none",
  async run({ dir, files }): Promise<CheckReport> {
    await slow();
    for (const file of files) pathOf({ dir, file });
    return checkFiles(dir, files);
  },
});

/** Applies the automatic fixes to one file. Idempotent by itself: a fixed file does not change again. */
export const fixFileTool = defineTool({
  name: "fix_file",
  description: "Rewrites the patterns of one file that the migration does not handle (retryGet). It cannot fix everything.",
  input: fileInput,
  effect: "idempotent",
  async run(args, { idempotencyKey }) {
    await slow();
    const path = pathOf(args);
    const before = readFileSync(path, "utf8");
    const after = fixSource(before);
    if (after !== before) {
      replaceFile(path, after);
      recordEffect(`fix ${args.file} ${idempotencyKey}`);
    }
    return after !== before ? `fixed ${args.file}` : `nothing to fix automatically in ${args.file}`;
  },
});

// ── the scripted model ───────────────────────────────────────────────────────

const use = (id: string, name: string, input: { [key: string]: JsonValue }): ToolUseBlock => ({ type: "tool_use", id, name, input });

/** The task the workflow gives the agent for one batch. Its first line carries the batch as JSON. */
function batchPrompt(dir: string, files: string[], maxFixRounds: number): string {
  return [
    `Migrate batch ${JSON.stringify({ dir, files, maxFixRounds })}`,
    `Migrate each file from legacy-http to modern-http with migrate_file (all in one turn), then run run_check on the batch.`,
    `For each failing file, call fix_file, then run run_check again; stop after ${maxFixRounds} fix rounds.`,
    `Finish with one line: PASS, or FAILING followed by the files that still fail.`,
  ].join("\n");
}

/**
 * The scripted stand-in for an LLM: a deterministic migrator that reads the batch from the task,
 * then reacts to the last check report (fix the failing files, or finish).
 */
export function migrationModel(): ScriptedModel {
  const turn = (request: ModelRequest): ScriptedReply => {
    const first = request.messages[0];
    const batch = /^Migrate batch (\{.*\})$/m.exec(first?.role === "user" ? textOf(first.content) : "");
    if (!batch) return { content: "I was not given a batch to migrate." };
    const { dir, files, maxFixRounds } = JSON.parse(batch[1]!) as { dir: string; files: string[]; maxFixRounds: number };
    const calls = request.messages.flatMap((m) => (m.role === "assistant" && Array.isArray(m.content) ? m.content.filter((b) => b.type === "tool_use") : []));
    const last = calls.at(-1);
    if (!last)
      return {
        content: [{ type: "text", text: `Migrating ${files.length} files.` }, ...files.map((file, i) => use(`migrate_${i}`, "migrate_file", { dir, file }))],
      };
    const checks = calls.filter((c) => c.name === "run_check").length;
    if (last.name !== "run_check") return { content: [use(`check_${checks}`, "run_check", { dir, files })] };
    const result = request.messages.findLast((m) => m.role === "tool");
    const report = JSON.parse(result?.role === "tool" ? (result.content.at(-1)?.content ?? "{}") : "{}") as Partial<CheckReport>;
    const failing = report.failing ?? [];
    if (failing.length === 0) return { content: "PASS" };
    if (checks > maxFixRounds) return { content: `FAILING ${failing.map((f) => `${f.file} (${f.problem})`).join(", ")}` };
    return {
      content: [
        { type: "text", text: `Fixing ${failing.length} file(s).` },
        ...failing.map((f, i) => use(`fix_${checks}_${i}`, "fix_file", { dir, file: f.file })),
      ],
    };
  };
  return new ScriptedModel(Array.from({ length: 32 }, () => turn));
}

/** The agent that migrates one batch: migrate → check → auto-fix (bounded) → report. */
export const codeMigrator = defineAgent({
  name: "code-migrator",
  version: "1",
  model: () => modelFromEnv() ?? migrationModel(),
  system:
    "You migrate JavaScript files from legacy-http to modern-http with the tools you are given. " +
    "Never edit a file by other means, never migrate a file twice, and follow the task's limits exactly.",
  tools: [migrateFileTool, runCheckTool, fixFileTool],
  budget: { maxSteps: 12, maxToolCalls: 40, maxCostUsd: 1 },
  maxTokens: 2048,
});

// ── the workflow ─────────────────────────────────────────────────────────────

function chunk<T>(items: readonly T[], size: number): T[][] {
  const batches: T[][] = [];
  for (let i = 0; i < items.length; i += size) batches.push(items.slice(i, i + size));
  return batches;
}

/** The code-migration workflow: analysis, a reviewed plan, agent-migrated batches with escalation, sign-off. */
export const codeMigration = defineWorkflow({
  name: "code-migration",
  version: "1",
  async run(ctx, input: MigrationInput): Promise<MigrationResult> {
    const { dir } = input;
    if (typeof dir !== "string" || !isAbsolute(dir))
      throw new ValidationError(`code-migration needs { dir: <absolute directory> }, got ${JSON.stringify(dir)}.`);
    const batchSize = input.batchSize ?? 2;
    const maxFixRounds = input.maxFixRounds ?? 2;

    const files = await ctx.step("analyze", () => listSourceFiles(dir), { effect: "none" });
    const plan = chunk(files, batchSize);
    const planReview = await ctx.askHuman({
      name: "plan-review",
      question: `Migrate ${files.length} files in ${plan.length} batches of up to ${batchSize}?`,
      options: [...MIGRATION_OPTIONS.planReview],
      context: { dir, plan },
    });
    if (planReview.option !== "approve") return { status: "plan-rejected", files, batches: [], decidedBy: planReview.by };

    const batches: BatchOutcome[] = [];
    for (const [index, batch] of plan.entries()) {
      const agent = await ctx.child(codeMigrator, { prompt: batchPrompt(dir, batch, maxFixRounds) });
      const fixes = agent.messages
        .flatMap((m) => (m.role === "assistant" && Array.isArray(m.content) ? m.content : []))
        .filter((b) => b.type === "tool_use" && b.name === "fix_file").length;
      // The workflow checks for itself rather than trusting the agent's last words.
      let report = await ctx.step("verify", () => checkFiles(dir, batch), { effect: "none" });
      let outcome: BatchOutcome["outcome"] = "passed";
      let escalations = 0;
      while (report.failing.length > 0) {
        escalations += 1;
        const reply = await ctx.askHuman({
          name: "escalate",
          question:
            `Batch ${index + 1} of ${plan.length} still fails after auto-fix: ` +
            `${report.failing.map((f) => `${f.file}: ${f.problem}`).join("; ")}. ` +
            `Fix it by hand and answer "fixed", "accept" it as it is, or "abort" the migration.`,
          options: [...MIGRATION_OPTIONS.escalate],
          context: { dir, batch: index + 1, failing: report.failing, agentSaid: agent.text },
          timeout: "72h",
          onTimeout: { option: "abort" },
        });
        if (reply.option === "abort") {
          batches.push({ files: batch, outcome: "accepted-failing", fixes, escalations });
          return { status: "aborted", files, batches, decidedBy: reply.by };
        }
        if (reply.option === "accept") {
          outcome = "accepted-failing";
          break;
        }
        outcome = "fixed-by-hand";
        report = await ctx.step("verify", () => checkFiles(dir, batch), { effect: "none" });
      }
      batches.push({ files: batch, outcome, fixes, escalations });
      ctx.log.info("batch done", { batch: index + 1, outcome });
    }

    const signOff = await ctx.askHuman({
      name: "sign-off",
      question: `All ${plan.length} batches are done (${batches.map((b, i) => `${i + 1}: ${b.outcome}`).join(", ")}). Sign the migration off?`,
      options: [...MIGRATION_OPTIONS.signOff],
      context: { dir, batches },
    });
    return { status: signOff.option === "approve" ? "signed-off" : "rejected", files, batches, decidedBy: signOff.by };
  },
});
