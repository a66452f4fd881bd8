import { RunConflictError, ValidationError } from "../../core/errors.js";
import { newEntry, type EntryData } from "../../core/journal.js";
import { decode, encode, serializeError, type SerializedError } from "../../core/serialize.js";
import { followChain } from "../live-ops.js";
import type { Scope } from "../replay/op-keys.js";
import type { ChildOptions, Workflow } from "../workflow.js";
import type { OpScheduler } from "./op-scheduler.js";

/** The parent's tags, read once per execution: children started together (Promise.all) all await one
 * read, so they resume, and journal their starts, in the order the code started them (FIFO in a queue). */
const tagReads = new WeakMap<OpScheduler, Promise<Record<string, string>>>();
function parentTags(exec: OpScheduler): Promise<Record<string, string>> {
  let read = tagReads.get(exec);
  if (!read) tagReads.set(exec, (read = exec.hostRef.store.getRunTags(exec.runId)));
  return read;
}

/** `ctx.child`: starts a child run (once: its id is journaled) and delivers how it ended. */
export function child<I, O>(exec: OpScheduler, scope: Scope, workflow: Workflow<I, O>, input: I, options: ChildOptions = {}): Promise<O> {
  if (!workflow || typeof workflow.name !== "string" || typeof workflow.run !== "function") {
    throw new ValidationError("ctx.child needs a workflow made with defineWorkflow.");
  }
  const key = exec.issue(scope, options.name ?? workflow.name, "child");
  const host = exec.hostRef;
  return exec.awaitOp<O>(key, async () => {
    const started = exec.replay.journal.first(key)?.data as EntryData["child.started"] | undefined;
    const childRunId = started?.childRunId ?? options.runId ?? `${exec.runId}/${key}`;
    if (!started) {
      const encoded = encode(input);
      // A child joins its workflow's default queue, like a run started with engine.start.
      const flow = workflow.queue === undefined ? {} : { flow: { queue: workflow.queue, concurrencyKey: null, priority: 0 } };
      // A child inherits its parent's tags.
      const tags = await parentTags(exec);
      const inherited = Object.keys(tags).length > 0 ? { tags } : {};
      await exec.write([
        newEntry("child.started", key, { childRunId, workflow: workflow.name, version: workflow.version, input: decode(encoded), ...flow, ...inherited }),
      ]);
      host.kick();
    }
    const started0 = await host.store.getRun(childRunId);
    // The store leaves a run that already holds the id untouched: if it is not this op's child, its end
    // would never wake this run, so the op fails now, once and for all (replay reads the entry).
    if (started0 && (started0.parentRunId !== exec.runId || started0.parentOpKey !== key)) {
      const owner = started0.parentRunId === null ? "as a run of its own" : `as the child of run "${started0.parentRunId}" (op "${started0.parentOpKey}")`;
      const conflict = new RunConflictError(
        childRunId,
        owner,
        "ctx.child needs a runId no other run holds: leave runId out (the default is unique per parent and op) or make it unique.",
      );
      const entry = newEntry("child.failed", key, { error: serializeError(conflict), status: "conflict" });
      exec.commitOutcome(key, [entry], exec.replay.outcomeOf(key, { seq: 0, kind: "child.failed", data: entry.data }));
      return;
    }
    // A child that continued as new is followed to the last run of its chain.
    const run = started0 && (await followChain(host.store, started0));
    if (
      run &&
      (run.status === "completed" ||
        run.status === "failed" ||
        run.status === "cancelled" ||
        run.status === "compensated" ||
        run.status === "compensation_failed")
    ) {
      if (run.status === "completed") {
        exec.commitOutcome(key, [newEntry("child.completed", key, { output: decode(run.output) })], { ok: true, value: decode(run.output) });
      } else {
        const error = decode<SerializedError>(run.error) ?? { name: "Error", message: run.status };
        const entry = newEntry("child.failed", key, { error, status: run.status });
        exec.commitOutcome(key, [entry], exec.replay.outcomeOf(key, { seq: 0, kind: "child.failed", data: entry.data }));
      }
    } else {
      exec.block({ kind: "child", opKey: key, childRunId: run?.runId ?? childRunId });
    }
  });
}
