import { userInfo } from "node:os";
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import type { HumanAnswer } from "../../core/journal.js";
import { decode } from "../../core/serialize.js";
import { idArg, intArg, jsonArg } from "../args.js";
import { CLI, jsonOption, print, printJson, storeOption, withEngine, type JsonOptions, type StoreOptions } from "../context.js";
import { humanContextLines, humanTable } from "../human-format.js";
import { deprecatedCommand } from "../deprecated.js";

const ACTIONS = ["retry", "skip", "fail", "answer"] as const;

interface AnswerOptions extends StoreOptions, JsonOptions {
  value?: unknown;
  message?: string;
  by?: string;
}

interface ListRequestsOptions extends StoreOptions, JsonOptions {
  run?: string;
  all?: boolean;
  limit?: number;
}

/** Registers `cairn answer` and `cairn human-requests` (with `cairn inbox`, its deprecated older name). */
export function registerHumanCommands(program: Command): void {
  const answer = program
    .command("answer")
    .description('answer a pending human request (e.g. "did this happen?" after a crash in an unsafe step)')
    .argument("<requestId>", "the request, as listed by `cairn human-requests`", idArg("request id"))
    .argument(
      "<choice>",
      "for a question from ctx.askHuman: one of its options (or `answer` with --value for a free-form reply); for a step that may have happened: retry (run it again), skip (treat it as done, with --value) or fail",
      choiceArg,
    )
    .option("--value <json>", "with skip: the step's result; with answer: the reply", jsonArg)
    .option("--message <text>", "a note kept with the answer")
    .option("--by <name>", "who answers", safeUser());
  storeOption(jsonOption(answer)).action(answerRequest);

  const list = (command: Command): void => {
    command
      .description("list human requests (questions for people) waiting for an answer")
      .option("--run <runId>", "only requests of this run", idArg("run id"))
      .option("--all", "include answered requests and those closed because their run finished")
      .option("--limit <n>", "at most this many (default 100; pending oldest first)", intArg(1, 1000));
    storeOption(jsonOption(command)).action(listRequests);
  };
  list(program.command("human-requests"));
  deprecatedCommand(program, "inbox", "human-requests", list);
}

/** A recovery action, or an askHuman option (checked against the request by the engine). */
function choiceArg(value: string): string {
  if (value.trim() === "") throw new InvalidArgumentError(`Give an option of the request, or one of ${ACTIONS.join(", ")}.`);
  return value;
}

function safeUser(): string | undefined {
  try {
    return userInfo().username;
  } catch {
    return undefined;
  }
}

async function answerRequest(requestId: string, choice: string, options: AnswerOptions): Promise<void> {
  const action = (ACTIONS as readonly string[]).includes(choice) ? (choice as HumanAnswer["action"]) : "answer";
  const answer: HumanAnswer = { action };
  if (action === "answer" && choice !== "answer") answer.option = choice;
  if (options.value !== undefined) answer.value = options.value;
  if (options.message !== undefined) answer.message = options.message;
  if (options.by !== undefined) answer.by = options.by;
  await withEngine(options, [], async (engine, cli) => {
    const result = await engine.respondToHuman(requestId, answer);
    const request = await engine.getHumanRequest(requestId);
    if (!result.duplicate) {
      await cli.audit("human.answer", requestId, {
        runId: request?.runId ?? null,
        action: answer.action,
        ...(answer.option === undefined ? {} : { option: answer.option }),
      });
    }
    if (options.json) return printJson({ requestId, answer: result.answer, duplicate: result.duplicate });
    if (result.duplicate) {
      const first = result.answer;
      return print(`${requestId} was already answered: ${first.option ?? first.action}${first.by ? ` by ${first.by}` : ""}. That answer stands.`);
    }
    print(`Answered ${requestId}: ${choice}. The run resumes when a worker picks it up.`);
  });
}

async function listRequests(options: ListRequestsOptions): Promise<void> {
  await withEngine(options, [], async (engine) => {
    const { requests, nextCursor } = await engine.listHumanRequestPage({
      ...(options.all ? {} : { status: "pending" as const }),
      ...(options.run === undefined ? {} : { runId: options.run }),
      limit: options.limit ?? 100,
    });
    if (options.json) return printJson(requests.map((r) => ({ ...r, answer: r.answer === null ? null : decode<HumanAnswer>(r.answer) })));
    if (requests.length === 0) return print(options.all ? "No human requests." : "No human requests are waiting.");
    print(
      ...humanTable(requests),
      ...humanContextLines(requests),
      ...(nextCursor ? ["", `More requests match than the ${requests.length} shown: raise --limit (at most 1000) or narrow with --run.`] : []),
      "",
      `Answer one with: ${CLI} answer <request> <option> [--value '<json>']   (retry|skip|fail for a step that may have happened; skip of a tool call needs --value, the result it returned)`,
    );
  });
}
