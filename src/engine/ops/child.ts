import { ValidationError } from "../../core/errors.js";
import { newEntry, type EntryData } from "../../core/journal.js";
import { decode, encode, type SerializedError } from "../../core/serialize.js";
import { followChain } from "../live-ops.js";
import type { Scope } from "../replay/op-keys.js";
import type { ChildOptions, Workflow } from "../workflow.js";
import type { OpScheduler } from "./op-scheduler.js";

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
      const tags = await host.store.getRunTags(exec.runId);
      const inherited = Object.keys(tags).length > 0 ? { tags } : {};
      await exec.write([
        newEntry("child.started", key, { childRunId, workflow: workflow.name, version: workflow.version, input: decode(encoded), ...flow, ...inherited }),
      ]);
      host.kick();
    }
    const started0 = await host.store.getRun(childRunId);
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
