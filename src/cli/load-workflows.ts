import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { isWorkflow } from "../engine/define-workflow.js";
import type { Workflow } from "../engine/workflow.js";
import { UsageError } from "./errors.js";

/** The examples module, next to the compiled CLI: dist/src/cli/ → dist/examples/index.js. */
export const EXAMPLES_URL = new URL("../../examples/index.js", import.meta.url);

/**
 * The workflows a module exports: its `workflows` array, its `default` export (a workflow
 * or an array of them), and any other export that is a workflow (string `name`, string
 * `version`, function `run`).
 */
export function workflowsOf(namespace: Record<string, unknown>): Workflow<any, any>[] {
  const found: unknown[] = [];
  for (const [key, value] of Object.entries(namespace)) {
    if ((key === "workflows" || key === "default") && Array.isArray(value)) found.push(...(value as unknown[]));
    else found.push(value);
  }
  return [...new Set(found)].filter(isWorkflow);
}

/**
 * Imports ES modules (paths relative to the working directory) and collects their workflows.
 * @throws UsageError when a file does not exist, exports no workflow, or two different
 *   workflows share a name and version.
 */
export async function loadWorkflowModules(specs: string[]): Promise<Workflow<any, any>[]> {
  const byKey = new Map<string, { workflow: Workflow<any, any>; from: string }>();
  for (const spec of specs) {
    const path = resolve(spec);
    if (!existsSync(path))
      throw new UsageError(`Workflow module "${spec}" not found (looked at ${path}). Pass the path of an ES module that exports workflows.`);
    const workflows = workflowsOf(await importModule(pathToFileURL(path).href, spec));
    if (workflows.length === 0) {
      throw new UsageError(
        `Module "${spec}" exports no workflow. Export \`workflows\` (an array), a default workflow, or named workflows made with defineWorkflow().`,
      );
    }
    for (const workflow of workflows) addUnique(byKey, workflow, spec);
  }
  return [...byKey.values()].map((entry) => entry.workflow);
}

async function importModule(href: string, label: string): Promise<Record<string, unknown>> {
  try {
    return (await import(href)) as Record<string, unknown>;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (/\.[cm]?tsx?$/i.test(label) && (code === "ERR_UNKNOWN_FILE_EXTENSION" || code === "ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING"))
      throw new UsageError(typeScriptHint(label, (error as Error).message));
    throw new Error(`Could not load workflow module ${label}: ${(error as Error).message}`, { cause: error });
  }
}

/** What to do when Node cannot load a TypeScript workflow module by itself. */
export function typeScriptHint(label: string, reason: string): string {
  return (
    `Could not load workflow module ${label}: Node ${process.version} does not run TypeScript files by itself (${reason}). Either ` +
    `build it to JavaScript and pass the .js/.mjs file (tsc, tsup, esbuild), ` +
    `or run the CLI through a TypeScript loader: \`node --import tsx ./node_modules/cairn/dist/src/cli/main.js … --workflows ${label}\` (npm i -D tsx), ` +
    `or on Node 22.6+ with type stripping: \`node --experimental-strip-types ./node_modules/cairn/dist/src/cli/main.js …\` (on by default from Node 23.6; erasable syntax only).`
  );
}

function addUnique(byKey: Map<string, { workflow: Workflow<any, any>; from: string }>, workflow: Workflow<any, any>, from: string): void {
  const key = `${workflow.name}@${workflow.version}`;
  const existing = byKey.get(key);
  if (existing && existing.workflow !== workflow) {
    throw new UsageError(`Workflow ${key} is defined twice (in ${existing.from} and ${from}). Give one of them another name or version.`);
  }
  byKey.set(key, { workflow, from });
}

/** The examples' workflows, or undefined when the examples are not next to this CLI. */
export async function loadExampleWorkflows(): Promise<Workflow<any, any>[] | undefined> {
  if (!existsSync(EXAMPLES_URL)) return undefined;
  return workflowsOf(await importModule(EXAMPLES_URL.href, "the examples"));
}

/**
 * Workflows from `--workflows` modules when given, else the examples.
 * @throws UsageError when neither is available.
 */
export async function resolveWorkflows(specs: string[] | undefined): Promise<Workflow<any, any>[]> {
  if (specs && specs.length > 0) return loadWorkflowModules(specs);
  const examples = await loadExampleWorkflows();
  if (!examples || examples.length === 0) {
    throw new UsageError("No workflows to load. Pass --workflows <module.js> with the ES module(s) that export your workflows.");
  }
  return examples;
}

/**
 * Picks the workflow called `name`; with several versions loaded, the highest version.
 * @throws UsageError naming the loaded workflows when none matches.
 */
export function pickWorkflow(workflows: Workflow<any, any>[], name: string): Workflow<any, any> {
  const matching = workflows.filter((workflow) => workflow.name === name);
  matching.sort((a, b) => b.version.localeCompare(a.version, undefined, { numeric: true }));
  const picked = matching[0];
  if (picked) return picked;
  const known = workflows.map((workflow) => `${workflow.name}@${workflow.version}`).join(", ") || "(none)";
  throw new UsageError(`Workflow "${name}" is not in the loaded modules (loaded: ${known}). Pass the module that defines it with --workflows <module.js>.`);
}

/** `name@version, …` for messages. */
export function describeWorkflows(workflows: Workflow<any, any>[]): string {
  return workflows.map((workflow) => `${workflow.name}@${workflow.version}`).join(", ") || "(none)";
}
