/**
 * A long-running agent: it watches a repository's dependencies for days. Every cycle (default every
 * 6 hours) an agent checks the watched packages' latest versions and opens one pull request per
 * outdated package; between cycles the run sleeps on a durable timer (no worker holds it). What it
 * shows:
 *
 * - **Tags** (`{ repo, team }` at start): find the watcher with `engine.listRuns({ tags })`,
 *   `GET /runs?tag=repo:acme/api` or `cairn runs --tag repo=acme/api`; each cycle's agent run
 *   inherits them.
 * - **A query for its progress**: `ctx.publish("progress", …)` after every cycle; read with
 *   `engine.getPublished(runId, "progress")` (`GET /runs/:id/values/progress`, `cairn value`)
 *   without waking the run.
 * - **An update to steer it**: `engine.request(runId, "watch", { add, remove })` changes the watched
 *   packages while it sleeps and replies with the new list (durable, idempotent by request id).
 * - **Credentials**: `open_pull_request` declares `credentials: ["github"]` and asks for the token at
 *   each use (`tool.credential("github")`): resolved from the engine's provider at that moment (a
 *   rotated token is picked up by the next use), never journaled, each use audited with run, op and
 *   scope, revoked when the cycle's run ends (`createEngine({ credentials: { github: envCredential("GITHUB_TOKEN") } })`).
 * - **Continue as new**: after `cyclesPerRun` cycles the run continues as a fresh one, so a watcher
 *   that runs for months never grows.
 *
 * The model is a real one when `ANTHROPIC_API_KEY` or `OPENAI_API_KEY` is set, else the scripted
 * {@link upgradeModel}. The package registry and the code host are fakes that record their effects
 * in the example ledger (`CAIRN_EXAMPLE_LEDGER`).
 *
 * @example
 * const engine = await createEngine({ workflows: [dependencyWatch, upgrader], credentials: { github: envCredential("GITHUB_TOKEN") } });
 * await engine.start(dependencyWatch, { repo: "acme/api", packages: ["zod", "hono"] }, { runId: "watch-acme-api", tags: { repo: "acme/api", team: "platform" } });
 * await engine.request("watch-acme-api", "watch", { add: ["vitest"] }, { requestId: "add-vitest" });
 * const progress = await engine.getPublished<WatchProgress>("watch-acme-api", "progress");
 */
import { defineWorkflow, type Duration } from "cairn";
import { defineAgent, defineTool, modelFromEnv, ScriptedModel, textOf, type ModelRequest, type ToolUseBlock } from "cairn/agent";
import { z } from "zod";
import { recordEffect } from "./ledger.js";

/** Input of the watcher. */
export interface WatchInput {
  repo: string;
  packages: string[];
  /** Time between cycles. Default 6h. */
  every?: Duration;
  /** Cycles before the run continues as a fresh one. Default 28 (a week at 6h). */
  cyclesPerRun?: number;
  /** Carried across continued runs. */
  cycle?: number;
  opened?: string[];
}

/** What the watcher publishes as `progress` after each cycle. */
export interface WatchProgress {
  cycle: number;
  packages: string[];
  /** Pull requests opened so far, over every continued run. */
  opened: string[];
  lastChecked: string;
}

/** The update `watch` takes. */
export const watchChange = z.object({ add: z.array(z.string().min(1).max(214)).max(50).optional(), remove: z.array(z.string()).max(50).optional() }).strict();

/** The fake registry: a package's latest version depends only on its name and the cycle. */
export function latestVersionOf(name: string, cycle: number): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return `${1 + (h % 5)}.${cycle}.0`;
}

/** Looks up the latest version of one package (no side effects). */
export const latestVersion = defineTool({
  name: "latest_version",
  description: "Returns the latest published version of an npm package.",
  input: z.object({ name: z.string().min(1), cycle: z.number().int().min(0) }),
  effect: "none",
  run: ({ name, cycle }) => ({ name, version: latestVersionOf(name, cycle) }),
});

/** The fake code host: it takes a bearer token and remembers which token each pull request was opened with. */
export const codeHost = {
  /** Token used per idempotency key (a real host would only check it). */
  tokens: new Map<string, string>(),
  openPullRequest(token: string, idempotencyKey: string, repo: string, name: string, version: string): { url: string } {
    if (!token.startsWith("ghp_")) throw new Error("the code host refused the token");
    this.tokens.set(idempotencyKey, token);
    return { url: `https://git.example.com/${repo}/pulls/${name}-${version}` };
  },
};

/**
 * Opens a pull request that upgrades one package, with the `github` credential resolved at this
 * use. `idempotent`: the code host deduplicates on the idempotency key, so a crash mid-call cannot
 * open two.
 */
export const openPullRequest = defineTool({
  name: "open_pull_request",
  description: "Opens a pull request upgrading one dependency of the repository to a version.",
  input: z.object({ repo: z.string(), name: z.string(), version: z.string() }),
  effect: "idempotent",
  credentials: ["github"],
  async run({ repo, name, version }, { idempotencyKey, credential }) {
    const token = await credential!("github");
    recordEffect(idempotencyKey);
    return codeHost.openPullRequest(token, idempotencyKey, repo, name, version);
  },
});

const CYCLE = /^Cycle (\d+) of ([^:]+): check (.*)\.$/;

/** The scripted stand-in: looks every package up, opens a pull request per package whose major is 2 or more, then reports. */
export function upgradeModel(): ScriptedModel {
  const ask = (request: ModelRequest) => {
    const first = request.messages[0];
    const match = CYCLE.exec(first?.role === "user" ? textOf(first.content) : "");
    return { cycle: Number(match?.[1] ?? 0), repo: match?.[2] ?? "repo", packages: (match?.[3] ?? "").split(", ").filter(Boolean) };
  };
  return new ScriptedModel([
    (request) => {
      const { cycle, packages } = ask(request);
      const calls: ToolUseBlock[] = packages.map((name, i) => ({ type: "tool_use", id: `v${i}`, name: "latest_version", input: { name, cycle } }));
      return { content: calls.length > 0 ? calls : "Nothing to check." };
    },
    (request) => {
      const { repo } = ask(request);
      const outdated = request.messages
        .filter((m) => m.role === "tool")
        .flatMap((m) => (m.role === "tool" ? m.content : []))
        .map((r) => JSON.parse(r.content) as { name: string; version: string })
        .filter((r) => Number(r.version.split(".")[0]) >= 2);
      const calls: ToolUseBlock[] = outdated.map((r, i) => ({
        type: "tool_use",
        id: `pr${i}`,
        name: "open_pull_request",
        input: { repo, name: r.name, version: r.version },
      }));
      return { content: calls.length > 0 ? calls : "All dependencies are current." };
    },
    () => ({ content: "Done for this cycle." }),
  ]);
}

/** The agent of one cycle. */
export const upgrader = defineAgent({
  name: "upgrader",
  model: () => modelFromEnv() ?? upgradeModel(),
  system: "You keep a repository's dependencies current. Look up each package's latest version, then open one pull request per outdated package.",
  tools: [latestVersion, openPullRequest],
  budget: { maxSteps: 8, maxToolCalls: 60, maxCostUsd: 0.5 },
});

/** The watcher: cycles of the agent, a durable sleep between them, steerable while it sleeps. */
export const dependencyWatch = defineWorkflow({
  name: "dependency-watch",
  async run(ctx, input: WatchInput) {
    const packages = new Set(input.packages);
    const opened = [...(input.opened ?? [])];
    ctx.handle("watch", (payload) => {
      const change = watchChange.parse(payload);
      for (const name of change.add ?? []) packages.add(name);
      for (const name of change.remove ?? []) packages.delete(name);
      return { packages: [...packages] };
    });
    const cyclesPerRun = input.cyclesPerRun ?? 28;
    const first = input.cycle ?? 0;
    for (let cycle = first; cycle < first + cyclesPerRun; cycle++) {
      const result = await ctx.child(upgrader, { prompt: `Cycle ${cycle} of ${input.repo}: check ${[...packages].join(", ")}.` });
      for (const message of result.messages)
        if (message.role === "tool")
          for (const block of message.content) {
            const url = /"url":"([^"]+)"/.exec(block.content)?.[1];
            if (url && !opened.includes(url)) opened.push(url);
          }
      const progress: WatchProgress = { cycle, packages: [...packages], opened, lastChecked: new Date(ctx.now()).toISOString() };
      await ctx.publish("progress", progress);
      await ctx.sleep(`cycle-${cycle}`, input.every ?? "6h");
    }
    return ctx.continueAsNew({ ...input, packages: [...packages], cycle: first + cyclesPerRun, opened });
  },
});
