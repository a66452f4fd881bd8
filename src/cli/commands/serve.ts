import { Option, type Command } from "commander";
import { createHostingEngine } from "../command-engine.js";
import { builtDashboardDir, DASHBOARD_PATH } from "../../server/dashboard.js";
import { isLoopbackHost } from "../../server/loopback.js";
import { serve } from "../../server/serve.js";
import { intArg } from "../args.js";
import { CLI, defined, print, storeOption, type StoreOptions } from "../context.js";
import { UsageError } from "../errors.js";
import { untilShutdown } from "../lifecycle.js";
import { loadWebhooks } from "../load-webhooks.js";
import { installAlertRules, loadAlertRules } from "../load-alerts.js";
import { startAlertEvaluator, type AlertEvaluator } from "../../server/alerts/evaluator.js";
import { hostNameOf, normalizeOrigin } from "../../server/request-guard.js";
import { describeWorkflows, resolveWorkflows } from "../load-workflows.js";
import { maxRecoveryOption } from "../load-schedules.js";
import { retentionFrom, retentionOptions, type RetentionCommandOptions } from "./retention.js";

interface ServeCommandOptions extends StoreOptions, RetentionCommandOptions {
  host: string;
  port: number;
  workflows?: string[];
  concurrency?: number;
  worker: boolean;
  auth: "none" | "tokens";
  dashboard: boolean;
  maxRecoveryAttempts?: number;
  allowedHost: string[];
  corsOrigin: string[];
  metricsTag: string[];
  webhooks?: string;
  alerts?: string;
  alertInterval: number;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** Registers `cairn serve`: the HTTP API and a worker in one process. */
export function registerServeCommand(program: Command): void {
  const command = program
    .command("serve")
    .description("run the HTTP API (with live run streams) and a worker on the store; without --auth tokens, on loopback only")
    .option("--host <address>", "address to listen on; anything but loopback (127.0.0.1, ::1, localhost) needs --auth tokens", "127.0.0.1")
    .addOption(
      new Option("--auth <mode>", "none, or tokens: every request needs an API token (`cairn token create`)").choices(["none", "tokens"]).default("none"),
    )
    .option("--port <n>", "port to listen on; 0 picks a free one", intArg(0, 65_535), 4000)
    .option("--workflows <module...>", "ES module(s) exporting workflows (default: the examples)")
    .option("--concurrency <n>", "runs the worker holds at once (default 16)", intArg(1, 10_000))
    .option("--no-worker", "serve the API only; runs are executed by `cairn worker` processes")
    .option("--no-dashboard", "do not serve the web dashboard at /ui/")
    .option(
      "--allowed-host <name>",
      "a host name the Host header may carry besides 127.0.0.1, localhost and [::1] (a proxy's public name); repeat for more",
      collect,
      [],
    )
    .option("--cors-origin <origin>", "an origin (https://ops.example.com) whose web pages may call the API; repeat for more", collect, [])
    .option(
      "--metrics-tag <key=v1,v2>",
      "label cairn_runs_by_tag of GET /metrics with these values of a tag (bounded: only the values named); repeat for more keys",
      collect,
      [],
    )
    .option("--webhooks <module>", "ES module exporting `webhooks` (name → { secret, runId, type, eventId }), served at POST /webhooks/<name>")
    .option("--alerts <file>", "JSON alert rules ({ rules: [...] }) to install on the store at start; alerts go to the outbox topic cairn.alert")
    .option("--alert-interval <ms>", "how often the alert rules are evaluated", intArg(1000, 86_400_000), 30_000);
  storeOption(retentionOptions(maxRecoveryOption(command))).action(runServe);
}

async function runServe(options: ServeCommandOptions): Promise<void> {
  if (!isLoopbackHost(options.host) && options.auth !== "tokens") {
    throw new UsageError(
      `Refusing to listen on ${options.host} without authentication: anyone who can reach that address could start, cancel and answer runs. ` +
        `Add --auth tokens (and create tokens with \`cairn token create\`), or listen on a loopback address (--host 127.0.0.1, the default, or ::1).`,
    );
  }
  const workflows = await resolveWorkflows(options.workflows);
  const webhooks = options.webhooks === undefined ? undefined : await loadWebhooks(options.webhooks);
  const alertRules = options.alerts === undefined ? undefined : loadAlertRules(options.alerts);
  checkServeOptions(options);
  const shutdown = untilShutdown("stopping: the server closes, in-flight steps finish, then the store is closed");
  const retention = retentionFrom(options);
  if (retention && !options.worker) throw new UsageError("--retention-* options need the built-in worker: drop --no-worker, or give them to `cairn worker`.");
  const engine = await createHostingEngine(options, workflows, retention);
  let alerts: AlertEvaluator | undefined;
  try {
    const worker = options.worker ? engine.startWorker(defined({ concurrency: options.concurrency })) : undefined;
    if (alertRules) await installAlertRules(engine.store, alertRules, options.alerts!);
    const dashboardDir = options.dashboard ? builtDashboardDir() : undefined;
    const server = await serve(
      engine,
      defined({
        host: options.host,
        port: options.port,
        auth: options.auth,
        dashboardDir,
        allowedHosts: options.allowedHost,
        corsOrigins: options.corsOrigin,
        metricsTags: metricsTagsOf(options.metricsTag),
        webhooks: webhooks,
      }),
    );
    alerts = startAlertEvaluator(engine.store, { intervalMs: options.alertInterval });
    print(
      `cairn serve listening on ${server.url} (store ${engine.store.url}, workflows ${describeWorkflows(workflows)}${worker ? `, worker ${worker.workerId}` : ", no worker"}, auth ${options.auth})`,
      `  ${dashboardLine(server.url, options.dashboard, dashboardDir)}`,
      ...(options.auth === "tokens" && dashboardDir
        ? [
            `  with --auth tokens, paste a token into its panel (${CLI} token create --name me --scope read,write), or open a one-time link`,
            `  ${server.url}${DASHBOARD_PATH}/?ticket=<ticket> with a ticket from POST ${server.url}/auth/tickets (never put the token itself in a URL)`,
          ]
        : []),
      `  API description: ${server.url}/openapi.json · health: ${server.url}/health`,
      ...(alertRules
        ? [`  alerts: ${alertRules.length} rule(s) from ${options.alerts}, evaluated every ${options.alertInterval / 1000} s (topic cairn.alert)`]
        : []),
    );
    await shutdown;
    await server.close();
    await alerts.stop();
    await worker?.stop({ drain: true });
  } finally {
    await alerts?.stop();
    await engine.close();
  }
}

/** The line that tells where the dashboard is, or why there is none. */
export function dashboardLine(url: string, wanted: boolean, dir: string | undefined): string {
  if (dir) return `dashboard: ${url}${DASHBOARD_PATH}/`;
  return wanted ? "dashboard: not built (run `npm run build`); the API is served alone" : "dashboard: off (--no-dashboard)";
}

function checkServeOptions(options: ServeCommandOptions): void {
  for (const host of options.allowedHost)
    if (hostNameOf(host) === undefined)
      throw new UsageError(`--allowed-host ${JSON.stringify(host)} is not a host name: give one such as cairn.example.com or 10.0.0.5.`);
  for (const origin of options.corsOrigin) {
    try {
      normalizeOrigin(origin);
    } catch (error) {
      throw new UsageError(`--cors-origin: ${(error as Error).message}`);
    }
  }
}

/** `--metrics-tag tier=free,pro` (repeatable) as `{ tier: ["free", "pro"] }`; undefined when none. */
export function metricsTagsOf(flags: readonly string[]): Record<string, string[]> | undefined {
  if (flags.length === 0) return undefined;
  const tags: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const flag of flags) {
    const at = flag.indexOf("=");
    const key = flag.slice(0, at);
    const values = flag
      .slice(at + 1)
      .split(",")
      .map((v) => v.trim())
      .filter(Boolean);
    if (at < 1 || !/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/.test(key) || values.length === 0)
      throw new UsageError(`--metrics-tag must be key=value[,value…] with a tag key such as tier (got ${JSON.stringify(flag)}).`);
    tags[key] = [...(tags[key] ?? []), ...values];
  }
  return tags;
}
