import { ValidationError } from "../core/errors.js";
import type { SerializedError } from "../core/serialize.js";

/** Plan names and node ids: letters, digits, `_` and `-` (they become parts of op names). */
export const PLAN_ID = /^[a-zA-Z0-9_-]{1,64}$/;

/** What a plan node runs as: a step in this run, or a child run. */
export type PlanNodeKind = "step" | "child";

/** A node as the journal holds it: no functions, only what replay and `cairn show` need. */
export interface PlanNodeSpec {
  id: string;
  /** Ids of the nodes that must be done before this one runs. */
  deps: string[];
  kind: PlanNodeKind;
  /** For child nodes: the child's workflow name. */
  workflow?: string;
  /** A short description for people (e.g. the tool and its arguments). */
  label?: string;
}

/** Where a node is: pending → running → done | failed; skipped when a dependency failed or was skipped. */
export type PlanNodeStatus = "pending" | "running" | "done" | "failed" | "skipped";

/** A node with its status and, once settled, its result or error. */
export interface PlanNodeState extends PlanNodeSpec {
  status: PlanNodeStatus;
  result?: unknown;
  error?: SerializedError;
  /** For skipped nodes: the dependency that failed or was skipped. */
  skippedBecause?: string;
}

/**
 * An edit to a plan. Applied in this order: `remove`, then `add` (appended after the existing
 * nodes), then `order`. Only pending nodes may be removed or reordered.
 */
export interface PlanEditSpec {
  /** New nodes; their deps may name existing nodes (any status but removed) or other added nodes. */
  add?: PlanNodeSpec[];
  /** Pending nodes to drop. A pending node that still depends on one must be removed too. */
  remove?: string[];
  /**
   * Pending nodes in their new relative order: they swap places among the slots they held, so
   * nothing else moves. Order decides which ready nodes start first (and which wait when a
   * wave is capped by `maxConcurrency`).
   */
  order?: string[];
}

/** The whole state of a plan: plain data, the same live and after a replay. */
export interface PlanState {
  name: string;
  nodes: PlanNodeState[];
  /** Ids of removed nodes: never reused, so every node id names one op for the plan's life. */
  removed: string[];
  /** Revisions applied so far. */
  revision: number;
}

/** Checks a plan's name. */
export function checkPlanName(name: unknown): string {
  if (typeof name !== "string" || !PLAN_ID.test(name)) {
    throw new ValidationError(`Plan name ${JSON.stringify(name)} is invalid: use 1–64 letters, digits, _ or -.`);
  }
  return name;
}

/** Checks one node spec's shape; returns a clean copy. */
export function checkNodeSpec(plan: string, node: unknown): PlanNodeSpec {
  const raw = node as Partial<PlanNodeSpec> | null;
  if (!raw || typeof raw !== "object") throw new ValidationError(`Plan "${plan}": every node must be an object with an id.`);
  if (typeof raw.id !== "string" || !PLAN_ID.test(raw.id)) {
    throw new ValidationError(`Plan "${plan}": node id ${JSON.stringify(raw.id)} is invalid: use 1–64 letters, digits, _ or -.`);
  }
  const deps = raw.deps ?? [];
  if (!Array.isArray(deps) || deps.some((dep) => typeof dep !== "string")) {
    throw new ValidationError(`Plan "${plan}": deps of node "${raw.id}" must be an array of node ids.`);
  }
  if (new Set(deps).size !== deps.length) throw new ValidationError(`Plan "${plan}": node "${raw.id}" lists a dependency twice.`);
  if (deps.includes(raw.id)) throw new ValidationError(`Plan "${plan}" has a cycle: ${raw.id} → ${raw.id}.`);
  const spec: PlanNodeSpec = { id: raw.id, deps: [...deps], kind: raw.kind === "child" ? "child" : "step" };
  if (raw.workflow !== undefined) spec.workflow = String(raw.workflow);
  if (raw.label !== undefined) spec.label = String(raw.label);
  return spec;
}

/** Finds a cycle among `nodes` (ids in order, first repeated), or null. */
export function findCycle(nodes: readonly PlanNodeSpec[]): string[] | null {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const state = new Map<string, "visiting" | "done">();
  const path: string[] = [];
  const visit = (id: string): string[] | null => {
    const mark = state.get(id);
    if (mark === "done") return null;
    if (mark === "visiting") return [...path.slice(path.indexOf(id)), id];
    state.set(id, "visiting");
    path.push(id);
    for (const dep of byId.get(id)?.deps ?? []) {
      const cycle = visit(dep);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(id, "done");
    return null;
  };
  for (const node of nodes) {
    const cycle = visit(node.id);
    if (cycle) return cycle;
  }
  return null;
}

/** Validates a whole node list: shapes, unique ids, known deps, no cycle. Returns clean specs. */
export function checkPlan(plan: string, nodes: unknown): PlanNodeSpec[] {
  if (!Array.isArray(nodes) || nodes.length === 0) throw new ValidationError(`Plan "${plan}" needs a non-empty array of nodes.`);
  const specs = nodes.map((node) => checkNodeSpec(plan, node));
  checkGraph(plan, specs, new Set());
  return specs;
}

/** Unique ids (also against `reserved`), deps that exist, no cycle. */
function checkGraph(plan: string, specs: readonly PlanNodeSpec[], reserved: ReadonlySet<string>): void {
  const ids = new Set<string>();
  for (const spec of specs) {
    if (ids.has(spec.id)) throw new ValidationError(`Plan "${plan}" has two nodes with id "${spec.id}".`);
    if (reserved.has(spec.id)) throw new ValidationError(`Plan "${plan}": node id "${spec.id}" was used by a removed node; ids are never reused.`);
    ids.add(spec.id);
  }
  for (const spec of specs) {
    const missing = spec.deps.find((dep) => !ids.has(dep));
    if (missing !== undefined) throw new ValidationError(`Plan "${plan}": node "${spec.id}" depends on "${missing}", which is not in the plan.`);
  }
  const cycle = findCycle(specs);
  if (cycle) throw new ValidationError(`Plan "${plan}" has a cycle: ${cycle.join(" → ")}. A plan must be a DAG.`);
}

/** A fresh state for validated specs: every node pending. */
export function initialState(name: string, specs: readonly PlanNodeSpec[]): PlanState {
  return { name, nodes: specs.map((spec) => ({ ...spec, deps: [...spec.deps], status: "pending" })), removed: [], revision: 0 };
}

/** Validates an edit's shape; returns a clean copy. */
export function checkEdit(plan: string, edit: unknown): PlanEditSpec {
  const raw = edit as PlanEditSpec | null;
  if (!raw || typeof raw !== "object") throw new ValidationError(`Plan "${plan}": an edit is an object with add, remove and/or order.`);
  const ids = (field: "remove" | "order"): string[] | undefined => {
    const value = raw[field];
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || value.some((id) => typeof id !== "string")) {
      throw new ValidationError(`Plan "${plan}": edit.${field} must be an array of node ids.`);
    }
    return [...value];
  };
  const clean: PlanEditSpec = {};
  if (raw.add !== undefined) {
    if (!Array.isArray(raw.add)) throw new ValidationError(`Plan "${plan}": edit.add must be an array of nodes.`);
    clean.add = raw.add.map((node) => checkNodeSpec(plan, node));
  }
  const remove = ids("remove");
  if (remove) clean.remove = remove;
  const order = ids("order");
  if (order) clean.order = order;
  if (!clean.add?.length && !clean.remove?.length && !clean.order?.length) throw new ValidationError(`Plan "${plan}": the edit changes nothing.`);
  return clean;
}

/**
 * Applies an edit to a state and returns the new state (the input is not changed). Throws a
 * ValidationError, naming the node, when the edit touches a node that is not pending, names an
 * unknown node, reuses an id, or would leave a dangling dependency or a cycle.
 */
export function applyEdit(state: PlanState, edit: PlanEditSpec): PlanState {
  const plan = state.name;
  const byId = new Map(state.nodes.map((node) => [node.id, node]));
  const mustBePending = (id: string, what: string) => {
    const node = byId.get(id);
    if (!node) throw new ValidationError(`Plan "${plan}": cannot ${what} "${id}": there is no such node.`);
    if (node.status !== "pending") throw new ValidationError(`Plan "${plan}": cannot ${what} "${id}": it is ${node.status}; only pending nodes can be edited.`);
  };
  const remove = new Set(edit.remove ?? []);
  for (const id of remove) mustBePending(id, "remove");
  let nodes = state.nodes.filter((node) => !remove.has(node.id));
  for (const node of nodes) {
    const gone = node.deps.find((dep) => remove.has(dep));
    if (gone !== undefined) throw new ValidationError(`Plan "${plan}": cannot remove "${gone}": "${node.id}" depends on it (remove that too).`);
  }
  const removed = [...state.removed, ...remove];
  const added: PlanNodeState[] = (edit.add ?? []).map((spec) => ({ ...spec, deps: [...spec.deps], status: "pending" }));
  nodes = [...nodes.map((node) => ({ ...node })), ...added];
  checkGraph(plan, nodes, new Set(removed));
  if (edit.order?.length) {
    if (new Set(edit.order).size !== edit.order.length) throw new ValidationError(`Plan "${plan}": edit.order lists a node twice.`);
    const current = new Map(nodes.map((node) => [node.id, node]));
    for (const id of edit.order) {
      const node = current.get(id);
      if (!node) throw new ValidationError(`Plan "${plan}": cannot reorder "${id}": there is no such node.`);
      if (node.status !== "pending")
        throw new ValidationError(`Plan "${plan}": cannot reorder "${id}": it is ${node.status}; only pending nodes can be edited.`);
    }
    const listed = new Set(edit.order);
    const slots = nodes.flatMap((node, i) => (listed.has(node.id) ? [i] : []));
    const reordered = edit.order.map((id) => current.get(id)!);
    slots.forEach((slot, i) => (nodes[slot] = reordered[i]!));
  }
  const next: PlanState = { name: plan, nodes, removed, revision: state.revision + 1 };
  propagateSkips(next);
  return next;
}

/** Marks pending nodes whose dependency failed or was skipped as skipped (transitively). Mutates. */
export function propagateSkips(state: PlanState): void {
  const byId = new Map(state.nodes.map((node) => [node.id, node]));
  for (let changed = true; changed;) {
    changed = false;
    for (const node of state.nodes) {
      if (node.status !== "pending") continue;
      const blocker = node.deps.find((dep) => {
        const status = byId.get(dep)?.status;
        return status === "failed" || status === "skipped";
      });
      if (blocker === undefined) continue;
      node.status = "skipped";
      node.skippedBecause = blocker;
      changed = true;
    }
  }
}

/** Pending nodes whose dependencies are all done, in plan order. */
export function readyNodes(state: PlanState): PlanNodeState[] {
  const byId = new Map(state.nodes.map((node) => [node.id, node]));
  return state.nodes.filter((node) => node.status === "pending" && node.deps.every((dep) => byId.get(dep)?.status === "done"));
}

/** Op names a plan uses. Names and ids are restricted to `[a-zA-Z0-9_-]`, so these never collide. */
export const planOps = {
  /** The step that journals the plan as created. */
  created: (plan: string) => `plan-${plan}`,
  /** The step that journals each revision. */
  revised: (plan: string) => `plan-${plan}~rev`,
  /** The step or child op of a node. */
  node: (plan: string, id: string) => `plan-${plan}:${id}`,
};

/** The intent journaled with a plan's bookkeeping steps, by which `cairn show` recognises them. */
export interface PlanIntent {
  cairnPlan: string;
  action: "create" | "revise";
  revision?: number;
}
