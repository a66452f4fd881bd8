import { describe, expect, it } from "vitest";
import { isCairnError } from "../core/errors.js";
import { defineWorkflow } from "./define-workflow.js";

const run = async () => null;

function refusal(name: string): Error | undefined {
  try {
    defineWorkflow({ name, run });
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

describe("defineWorkflow names", () => {
  it.each(["greet", "release-v2.3.0", "team:billing_sync", "Cairn.x", "cairn", "cairn_alert"])("accepts %j", (name) => {
    expect(defineWorkflow({ name, run }).name).toBe(name);
  });

  it.each(["", "-lead", "has space", "a/b", "x".repeat(129)])("refuses %j, saying what a name may hold", (name) => {
    const error = refusal(name);
    expect(isCairnError(error, "INVALID_INPUT")).toBe(true);
    expect(error?.message).toContain("use 1-128 letters");
  });

  it.each(["cairn.alert", "cairn.mine"])("refuses %j: the cairn. prefix is reserved for the system's own runs, which lists leave out", (name) => {
    const error = refusal(name);
    expect(isCairnError(error, "INVALID_INPUT")).toBe(true);
    expect(error?.message).toContain('names starting with "cairn." are reserved');
  });
});
