import type { Command } from "commander";
import { idArg, intArg, jsonArg } from "../args.js";
import { UsageError } from "../errors.js";
import { CLI, jsonOption, print, printJson, shellQuote, storeOption, withEngine, type JsonOptions, type StoreOptions } from "../context.js";

interface SendOptions extends StoreOptions, JsonOptions {
  eventId?: string;
  secret?: boolean;
}

interface CancelOptions extends StoreOptions, JsonOptions {
  reason?: string;
}

interface ForkCommandOptions extends StoreOptions, JsonOptions {
  at: number;
  patchSeq?: number;
  patchValue?: unknown;
  runId?: string;
}

/** Registers `cairn send`, `cairn cancel`, `cairn retry` and `cairn fork`. */
export function registerControlCommands(program: Command): void {
  const send = program
    .command("send")
    .description("send an event to a run (buffered until the run waits for it)")
    .argument("<runId>", "the run to deliver to", idArg("run id"))
    .argument("<type>", "the event type the run waits for, e.g. review", idArg("event type"))
    .argument("[payload]", `the event's JSON payload, e.g. '{"approved":true}'`, jsonArg)
    .option("--event-id <id>", "idempotency key: sending the same id again is a no-op", idArg("event id"))
    .option("--secret", "the payload is a secret: the run gets it, every view of the run shows [redacted]")
    .addHelpText("after", `\nExample:\n  ${CLI} send research-1 review '{"approved":true}' --event-id review-1`);
  storeOption(jsonOption(send)).action(sendEvent);

  const cancel = program
    .command("cancel")
    .description("cancel a live run: its running step is aborted and it ends cancelled")
    .argument("<runId>", "the run to cancel", idArg("run id"))
    .option("--reason <text>", "why, kept in the journal");
  storeOption(jsonOption(cancel)).action(cancelRun);

  const retry = program
    .command("retry")
    .description("resume a failed, compensation_failed or dead (dead-lettered) run from its journal: finished steps and compensations are not run again")
    .argument("<runId>", "the failed, compensation_failed or dead run to retry", idArg("run id"));
  storeOption(jsonOption(retry)).action(retryRun);

  const fork = program
    .command("fork")
    .description("time travel: a new run with this run's journal up to a seq, continuing from there under current code")
    .argument("<runId>", "the run to fork (it is not changed)", idArg("run id"))
    .requiredOption("--at <seq>", "the last journal entry to keep (see cairn show)", intArg(1))
    .option("--patch-seq <seq>", "a step.completed entry at or before --at whose result to replace", intArg(1))
    .option("--patch-value <json>", "the step's result in the fork (JSON), with --patch-seq", jsonArg)
    .option("--run-id <id>", "the new run's id (default: generated)", idArg("run id"))
    .addHelpText("after", `\nExample:\n  ${CLI} fork research-1 --at 12 --patch-seq 9 --patch-value '{"score":0.9}'`);
  storeOption(jsonOption(fork)).action(forkRun);
}

async function sendEvent(runId: string, type: string, payload: unknown, options: SendOptions): Promise<void> {
  await withEngine(options, [], async (engine, cli) => {
    const sent = await engine.sendEvent(runId, type, payload, {
      ...(options.eventId === undefined ? {} : { eventId: options.eventId }),
      ...(options.secret ? { secret: true } : {}),
    });
    if (!sent.duplicate) await cli.audit("run.event", runId, { type, eventId: sent.eventId });
    if (options.json) return printJson({ runId, type, ...sent });
    print(
      sent.duplicate ? `Event ${sent.eventId} was already delivered to ${runId}; nothing changed.` : `Sent "${type}" to ${runId} (eventId ${sent.eventId}).`,
    );
  });
}

async function cancelRun(runId: string, options: CancelOptions): Promise<void> {
  await withEngine(options, [], async (engine, cli) => {
    const run = await engine.cancel(runId, options.reason);
    await cli.audit("run.cancel", runId, options.reason === undefined ? null : { reason: options.reason });
    if (options.json) return printJson(run);
    if (run.status === "pending") {
      // The run registered compensations or holds resources: a worker unwinds it, then it ends.
      print(`${run.runId}: cancelling${options.reason ? ` (${options.reason})` : ""}. A worker runs its compensations and releases its resources.`);
      print(`Follow it with: ${CLI} show ${shellQuote(run.runId)} --follow`);
      return;
    }
    print(`${run.runId}: cancelled${options.reason ? ` (${options.reason})` : ""}.`);
  });
}

async function retryRun(runId: string, options: StoreOptions & JsonOptions): Promise<void> {
  await withEngine(options, [], async (engine, cli) => {
    const run = await engine.retry(runId);
    await cli.audit("run.retry", runId);
    if (options.json) return printJson(run);
    print(`${run.runId}: ${run.status}. A worker resumes it from its journal; finished steps are not run again.`);
    print(`Follow it with: ${CLI} show ${shellQuote(run.runId)} --follow`);
  });
}

async function forkRun(runId: string, options: ForkCommandOptions): Promise<void> {
  if ((options.patchSeq === undefined) !== (options.patchValue === undefined)) {
    throw new UsageError("--patch-seq and --patch-value go together: give both to patch a step result, or neither.");
  }
  await withEngine(options, [], async (engine, cli) => {
    const patch = options.patchSeq === undefined ? undefined : { seq: options.patchSeq, result: options.patchValue };
    const handle = await engine.fork(runId, { atSeq: options.at, ...(patch ? { patch } : {}), ...(options.runId ? { runId: options.runId } : {}) });
    const run = await engine.getRun(handle.runId);
    if (handle.created) await cli.audit("run.fork", handle.runId, { from: runId, atSeq: options.at, patched: patch?.seq ?? null });
    if (options.json) return printJson({ created: handle.created, run });
    print(
      `${run.runId}: ${handle.created ? "forked" : "already forked"} from ${runId} at seq ${options.at}${patch ? ` (step result at seq ${patch.seq} patched)` : ""}; ${run.status}.`,
    );
    print(`A worker for ${run.workflow}@${run.version} replays it up to there and runs the rest under its current code.`);
    print(`Follow it with: ${CLI} show ${shellQuote(run.runId)} --follow`);
  });
}
