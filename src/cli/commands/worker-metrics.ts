import { Option, type Command } from "commander";
import type { Engine } from "../../engine/engine.js";
import { isLoopbackHost } from "../../server/loopback.js";
import type { RunningServer } from "../../server/serve.js";
import { serveMetrics } from "../../server/metrics/serve-metrics.js";
import { intArg } from "../args.js";
import { UsageError } from "../errors.js";

/** The options {@link metricsOptions} adds. */
export interface MetricsCommandOptions {
  metricsPort?: number;
  metricsHost: string;
  metricsAuth: "none" | "tokens";
}

/** Adds `--metrics-port`, `--metrics-host` and `--metrics-auth` to a command. */
export function metricsOptions(command: Command): Command {
  return command
    .option("--metrics-port <n>", "serve Prometheus metrics of this process at http://<metrics-host>:<n>/metrics (0 picks a free port)", intArg(0, 65_535))
    .option("--metrics-host <address>", "address of the metrics endpoint; anything but loopback needs --metrics-auth tokens", "127.0.0.1")
    .addOption(
      new Option("--metrics-auth <mode>", "none, or tokens: a scrape needs a read token without a namespace").choices(["none", "tokens"]).default("none"),
    );
}

/** Starts the metrics endpoint when `--metrics-port` was given. */
export async function startMetrics(engine: Engine, options: MetricsCommandOptions): Promise<RunningServer | undefined> {
  if (options.metricsPort === undefined) return undefined;
  if (!isLoopbackHost(options.metricsHost) && options.metricsAuth !== "tokens")
    throw new UsageError(
      `Refusing to serve metrics on ${options.metricsHost} without authentication: they name every workflow and count every namespace's runs. ` +
        `Add --metrics-auth tokens (scrape with a read token from \`cairn token create\`), or keep --metrics-host on loopback (127.0.0.1, the default, or ::1).`,
    );
  return serveMetrics(engine, { host: options.metricsHost, port: options.metricsPort, auth: options.metricsAuth });
}
