import type { Command } from "commander";
import { idArg, intArg, jsonArg } from "../args.js";
import { CLI, jsonOption, print, printJson, storeOption, withEngine, type JsonOptions, type StoreOptions } from "../context.js";
import { preview } from "../format.js";
import { ValueNotFoundError } from "../../core/errors.js";

interface RequestOptions extends StoreOptions, JsonOptions {
  payload?: unknown;
  requestId?: string;
  timeoutMs: number;
}

/** Registers `cairn request` (a request to a run's `ctx.handle` handler) and `cairn value` (a published value). */
export function registerLiveCommands(program: Command): void {
  const request = program
    .command("request")
    .description("send a request to a live run's ctx.handle handler and print its reply (needs a worker running the run)")
    .argument("<runId>", "the run to ask", idArg("run id"))
    .argument("<name>", "the handler's name (ctx.handle(name, …))", idArg("request name"))
    .option("--payload <json>", "the request's JSON payload", jsonArg)
    .option("--request-id <id>", "idempotency key: the same id gets the same reply, the handler runs once", idArg("request id"))
    .option("--timeout-ms <ms>", "how long to wait for the reply", intArg(0, 3_600_000), 30_000)
    .addHelpText("after", `\nExample:\n  ${CLI} request thread-42 steer --payload '{"topic":"sodium"}' --request-id steer-1`);
  storeOption(jsonOption(request)).action(sendRequest);

  const value = program
    .command("value")
    .description("print the latest value a run published (ctx.publish), without waking it")
    .argument("<runId>", "the run", idArg("run id"))
    .argument("<name>", "the published name, e.g. progress", idArg("value name"));
  storeOption(jsonOption(value)).action(showValue);
}

async function sendRequest(runId: string, name: string, options: RequestOptions): Promise<void> {
  await withEngine(options, [], async (engine, cli) => {
    const requestId = options.requestId ?? crypto.randomUUID();
    await cli.audit("run.request", runId, { name, requestId });
    const reply = await engine.request(runId, name, options.payload ?? null, { requestId, timeoutMs: options.timeoutMs });
    if (options.json) return printJson({ runId, name, requestId, reply });
    print(`${runId} replied to ${name} (request ${requestId}): ${preview(reply, 2000)}`);
  });
}

async function showValue(runId: string, name: string, options: StoreOptions & JsonOptions): Promise<void> {
  await withEngine(options, [], async (engine) => {
    const found = await engine.getPublished(runId, name);
    if (!found) throw new ValueNotFoundError(runId, name);
    if (options.json) return printJson({ runId, name, ...found });
    print(`${name} = ${preview(found.value, 2000)} (seq ${found.seq}, ${found.at.toISOString()})`);
  });
}
