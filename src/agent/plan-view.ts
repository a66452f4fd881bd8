import type { EntryData } from "../core/journal.js";
import type { SerializedError } from "../core/serialize.js";
import type { JournalEntryView } from "../engine/engine.js";
import { applyEdit, initialState, propagateSkips, type PlanEditSpec, type PlanIntent, type PlanNodeSpec, type PlanState } from "./plan-graph.js";

/** A plan as the journal shows it: what `cairn show` and dashboards draw. */
export interface PlanView {
  name: string;
  /** The op key of the step that created it. */
  opKey: string;
  /** Nodes in plan order with their statuses as of the last entry read. */
  state: PlanState;
}

/** `<anything>plan-<name>:<id>#<k>`: a node's op key (possibly inside a loop iteration). */
const NODE_KEY = /(?:^|\/)plan-([a-zA-Z0-9_-]+):([a-zA-Z0-9_-]+)#\d+$/;

/**
 * Rebuilds every plan of a run from its journal: the creating step's node list, each revision
 * applied in journal order, and each node's op (started → running, completed → done, failed for
 * good → failed); dependents of failed nodes are shown skipped. A plan created again under the
 * same name (e.g. by an agent's next turn) replaces the older one from then on.
 */
export function planViews(entries: readonly JournalEntryView[]): PlanView[] {
  const views: PlanView[] = [];
  const latest = new Map<string, PlanView>();
  /** Op keys of plan bookkeeping steps whose outcome is still to come. */
  const pending = new Map<string, PlanIntent>();
  for (const entry of entries) {
    const key = entry.opKey;
    if (key === null) continue;
    if (entry.kind === "step.started") {
      const intent = (entry.data as EntryData["step.started"]).intent as Partial<PlanIntent> | undefined;
      if (intent && typeof intent.cairnPlan === "string" && (intent.action === "create" || intent.action === "revise")) {
        pending.set(key, intent as PlanIntent);
        continue;
      }
    }
    const bookkeeping = pending.get(key);
    if (bookkeeping && entry.kind === "step.completed") {
      pending.delete(key);
      const result = (entry.data as EntryData["step.completed"]).result;
      if (bookkeeping.action === "create") {
        const nodes = (result as { nodes?: PlanNodeSpec[] } | null)?.nodes;
        if (!Array.isArray(nodes)) continue;
        const view: PlanView = { name: bookkeeping.cairnPlan, opKey: key, state: initialState(bookkeeping.cairnPlan, nodes) };
        views.push(view);
        latest.set(view.name, view);
      } else {
        const view = latest.get(bookkeeping.cairnPlan);
        if (!view) continue;
        try {
          view.state = applyEdit(view.state, result as PlanEditSpec);
        } catch {
          // The runtime checked the edit against the same state; a journal that disagrees is shown as it was.
        }
      }
      continue;
    }
    const match = NODE_KEY.exec(key);
    if (!match) continue;
    const node = latest.get(match[1]!)?.state.nodes.find((n) => n.id === match[2]);
    if (!node) continue;
    switch (entry.kind) {
      case "step.started":
      case "child.started":
        // After `cairn retry` a failed node (and the ones it skipped) runs again.
        if (node.status !== "done") node.status = "running";
        break;
      case "step.completed":
        node.status = "done";
        node.result = (entry.data as EntryData["step.completed"]).result;
        break;
      case "child.completed":
        node.status = "done";
        node.result = (entry.data as EntryData["child.completed"]).output;
        break;
      case "step.failed": {
        const data = entry.data as EntryData["step.failed"];
        if (data.final) fail(node, data.error);
        break;
      }
      case "child.failed":
        fail(node, (entry.data as EntryData["child.failed"]).error);
        break;
      default:
        break;
    }
    if (node.status === "failed") propagateSkips(latest.get(match[1]!)!.state);
  }
  return views;
}

function fail(node: PlanState["nodes"][number], error: SerializedError): void {
  node.status = "failed";
  node.error = error;
}
