import type { PlanNodeState, PlanNodeStatus } from "../agent/plan-graph.js";
import type { PlanView } from "../agent/plan-view.js";
import { formatError, preview, truncate } from "./format.js";

const MARK: Record<PlanNodeStatus, string> = { pending: "○", running: "▶", done: "✓", failed: "✗", skipped: "–" };
const STATUSES: PlanNodeStatus[] = ["done", "running", "pending", "failed", "skipped"];

/**
 * A plan as a tree for `cairn show`: nodes without dependencies at the top, every other node
 * under the last of its dependencies in plan order (the others are named after "also after"),
 * each with its status, and its result, error or the reason it was skipped.
 */
export function planTree(view: PlanView): string[] {
  const { nodes, revision, name } = view.state;
  const counts = STATUSES.map((status) => [status, nodes.filter((node) => node.status === status).length] as const).filter(([, n]) => n > 0);
  const header = `plan ${name}${revision > 0 ? ` (revision ${revision})` : ""}: ${counts.map(([status, n]) => `${n} ${status}`).join(" · ") || "no nodes"}`;
  const position = new Map(nodes.map((node, i) => [node.id, i]));
  const parentOf = (node: PlanNodeState): string | undefined =>
    node.deps
      .filter((dep) => position.has(dep))
      .sort((a, b) => position.get(a)! - position.get(b)!)
      .at(-1);
  const children = new Map<string | undefined, PlanNodeState[]>();
  for (const node of nodes) {
    const parent = parentOf(node);
    const list = children.get(parent) ?? [];
    list.push(node);
    children.set(parent, list);
  }
  const lines = [header];
  const walk = (parent: string | undefined, indent: string) => {
    const list = children.get(parent) ?? [];
    list.forEach((node, i) => {
      const last = i === list.length - 1;
      lines.push(`${indent}${last ? "└─" : "├─"} ${nodeLine(node, parentOf(node))}`);
      walk(node.id, `${indent}${last ? "   " : "│  "}`);
    });
  };
  walk(undefined, "");
  return lines;
}

function nodeLine(node: PlanNodeState, parent: string | undefined): string {
  const also = node.deps.filter((dep) => dep !== parent);
  let line = `${MARK[node.status]} ${node.id}  ${node.status}`;
  if (node.status === "done") line += ` → ${preview(node.result, 50)}`;
  if (node.status === "failed") line += `: ${truncate(formatError(node.error), 80)}`;
  if (node.status === "skipped" && node.skippedBecause) line += ` (${node.skippedBecause} did not succeed)`;
  const notes = [
    node.kind === "child" ? `child ${node.workflow ?? ""}`.trim() : "",
    node.label ? truncate(node.label, 50) : "",
    also.length ? `also after ${also.join(", ")}` : "",
  ];
  const extra = notes.filter(Boolean).join("; ");
  return extra ? `${line}  [${extra}]` : line;
}

/** Every plan of a run as trees, separated by blank lines; empty when the run has none. */
export function planTrees(views: readonly PlanView[]): string[] {
  return views.flatMap((view, i) => (i === 0 ? planTree(view) : ["", ...planTree(view)]));
}
