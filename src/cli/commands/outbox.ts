import type { Command } from "commander";
import type { OutboxMessage, OutboxStatus } from "../../core/outbox.js";
import { decode } from "../../core/serialize.js";
import { idArg, intArg } from "../args.js";
import { CLI, jsonOption, print, printJson, storeOption, withEngine, type JsonOptions, type StoreOptions } from "../context.js";
import { formatTime, oneLine, relative, table, truncate } from "../format.js";

interface ListOptions extends StoreOptions, JsonOptions {
  pending?: boolean;
  dead?: boolean;
  delivered?: boolean;
  all?: boolean;
  topic?: string;
  run?: string;
  limit?: number;
}

/** Registers `cairn outbox` (list messages) and `cairn outbox retry <id>`. */
export function registerOutboxCommands(program: Command): void {
  const outbox = program
    .command("outbox")
    .description("list outbox messages from ctx.emit not yet delivered: pending and dead (--pending, --dead, --delivered, --all to choose)")
    .option("--pending", "only pending messages (still being delivered)")
    .option("--dead", "only dead messages (out of attempts)")
    .option("--delivered", "only delivered messages")
    .option("--all", "every message, whatever its status")
    .option("--topic <topic>", "only this topic")
    .option("--run <runId>", "only messages of this run", idArg("run id"))
    .option("--limit <n>", "at most this many (default 50)", intArg(1, 1000));
  storeOption(jsonOption(outbox)).action(listMessages);

  // --store and --json are the parent's (commander parses them wherever they appear).
  outbox
    .command("retry")
    .description("re-queue a dead message: it is delivered again, with a fresh set of attempts (takes --store, --json)")
    .argument("<messageId>", "the message, as listed by `cairn outbox --dead`", idArg("message id"))
    .action(retryMessage);
}

function statuses(options: ListOptions): OutboxStatus[] | undefined {
  if (options.all) return undefined;
  const chosen: OutboxStatus[] = [];
  if (options.pending) chosen.push("pending");
  if (options.dead) chosen.push("dead");
  if (options.delivered) chosen.push("delivered");
  // Dead messages are undelivered too: hiding them by default would hide the ones that need a person.
  return chosen.length > 0 ? chosen : ["pending", "dead"];
}

function isDefault(options: ListOptions): boolean {
  return !options.all && !options.pending && !options.dead && !options.delivered;
}

async function listMessages(options: ListOptions): Promise<void> {
  await withEngine(options, [], async (engine) => {
    const status = statuses(options);
    const messages = await engine.listOutbox({
      ...(status ? { status } : {}),
      ...(options.topic ? { topic: options.topic } : {}),
      ...(options.run ? { runId: options.run } : {}),
      limit: options.limit ?? 50,
    });
    if (options.json) return printJson(messages.map((m) => ({ ...m, payload: decode(m.payload) })));
    if (messages.length === 0) {
      const what = status === undefined ? "" : isDefault(options) ? "undelivered " : `${status.join(" or ")} `;
      const hint = isDefault(options) ? ` Delivered ones: ${CLI} outbox --delivered.` : "";
      return print(`No ${what}outbox messages.${hint}`);
    }
    print(...outboxTable(messages));
    if (messages.some((m) => m.status === "dead")) print("", `Re-queue a dead message with: ${CLI} outbox retry <message>`);
  });
}

async function retryMessage(messageId: string, _local: unknown, command: Command): Promise<void> {
  const options = command.parent!.opts<StoreOptions & JsonOptions>();
  await withEngine(options, [], async (engine, cli) => {
    const { message, applied } = await engine.retryOutboxMessage(messageId);
    if (applied) await cli.audit("outbox.retry", messageId, { topic: message.topic, runId: message.runId });
    if (options.json) return printJson({ messageId, applied, status: message.status });
    if (!applied) return print(`${messageId} is ${message.status}, not dead: nothing to retry.`);
    print(`Re-queued ${messageId}: a dispatcher delivers it again (attempts start over).`);
  });
}

/** Messages as a table: id, topic, status, attempts, next attempt, last error. */
export function outboxTable(messages: readonly OutboxMessage[], now = Date.now()): string[] {
  return table(messages, [
    { header: "message", cell: (m) => m.messageId },
    { header: "topic", cell: (m) => m.topic },
    { header: "status", cell: (m) => (m.status === "pending" && m.leaseOwner ? "delivering" : m.status) },
    { header: "attempts", cell: (m) => String(m.attempts) },
    {
      header: "next attempt",
      cell: (m) =>
        m.status === "pending"
          ? `${formatTime(m.nextAttemptAt)} (${relative(m.nextAttemptAt, now)})`
          : m.status === "delivered"
            ? `delivered ${formatTime(m.deliveredAt)}`
            : "-",
    },
    { header: "last error", cell: (m) => (m.lastError === null ? "-" : truncate(oneLine(m.lastError), 60)) },
  ]);
}
