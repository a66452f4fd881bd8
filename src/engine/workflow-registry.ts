import { ValidationError, WorkflowNotRegisteredError } from "../core/errors.js";
import { isWorkflow } from "./define-workflow.js";
import type { Workflow } from "./workflow.js";

/** The workflows an engine runs, by `name@version`; for a name, the last registered version is the current one. */
export class WorkflowRegistry {
  /** Registered workflows by `name@version`, in registration order. */
  readonly byKey = new Map<string, Workflow<any, any>>();

  /** Registers the workflows given to createEngine, refusing anything that is not one. */
  constructor(workflows: readonly unknown[]) {
    for (const [i, workflow] of workflows.entries()) {
      if (!isWorkflow(workflow)) throw new ValidationError(`createEngine: workflows[${i}] is not a workflow; make it with defineWorkflow().`);
      this.byKey.set(`${workflow.name}@${workflow.version}`, workflow);
    }
  }

  /** Every registered workflow name, once each. */
  names(): string[] {
    return [...new Set([...this.byKey.values()].map((w) => w.name))];
  }

  /** The current (last registered) version of each workflow name. */
  current(): Workflow<any, any>[] {
    return [...new Map([...this.byKey.values()].map((w) => [w.name, w])).values()];
  }

  /** The version of a workflow that `start(name)` would use (the last registered), if registered here. */
  currentVersion(name: string): string | undefined {
    let version: string | undefined;
    for (const candidate of this.byKey.values()) if (candidate.name === name) version = candidate.version;
    return version;
  }

  /**
   * The workflow `start` runs: the one given, or the current version of a registered name, or with
   * `version` that version of it (registered here).
   */
  resolve(workflow: Workflow<any, any> | string, version?: string): Workflow<any, any> {
    if (version !== undefined) {
      const name = typeof workflow === "string" ? workflow : workflow.name;
      const found = this.byKey.get(`${name}@${version}`);
      if (!found) throw new WorkflowNotRegisteredError(`${name}@${version}`, [...this.byKey.keys()]);
      if (typeof workflow !== "string" && found !== workflow)
        throw new ValidationError(`start: version "${version}" was given with a workflow object of version "${workflow.version}"; give one or the other.`);
      return found;
    }
    if (typeof workflow === "string") {
      let found: Workflow<any, any> | undefined;
      for (const candidate of this.byKey.values()) if (candidate.name === workflow) found = candidate;
      if (!found) throw new WorkflowNotRegisteredError(workflow, this.names());
      return found;
    }
    if (!isWorkflow(workflow)) throw new ValidationError("start: the first argument must be a workflow (from defineWorkflow) or a registered workflow name.");
    return workflow;
  }
}
