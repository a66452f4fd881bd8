import { useState } from "react";

/** The state of one of a page's actions: which item is busy, and what the last one came to. */
export interface ActionState {
  busy: string | undefined;
  outcome: { ok: boolean; text: string } | undefined;
  /** Runs `act` for `key` (one at a time); its resolved text, or the error's message, becomes the outcome. */
  run: (key: string, act: () => Promise<string>) => Promise<void>;
}

/** One action at a time per page, its outcome shown by {@link ActionOutcome}. */
export function useAction(after?: () => void): ActionState {
  const [busy, setBusy] = useState<string>();
  const [outcome, setOutcome] = useState<ActionState["outcome"]>();
  const run = async (key: string, act: () => Promise<string>) => {
    setBusy(key);
    setOutcome(undefined);
    try {
      setOutcome({ ok: true, text: await act() });
    } catch (error) {
      setOutcome({ ok: false, text: (error as Error).message });
    } finally {
      setBusy(undefined);
      after?.();
    }
  };
  return { busy, outcome, run };
}

/** What the last action came to: a polite status, or an alert when it failed. */
export function ActionOutcome({ state }: { state: ActionState }) {
  const outcome = state.outcome;
  return (
    <div className="action-outcome" role="status" aria-live="polite" data-action-outcome={outcome ? (outcome.ok ? "ok" : "failed") : ""}>
      {outcome && (outcome.ok ? <span>{outcome.text}</span> : <span className="error-box">{outcome.text}</span>)}
    </div>
  );
}
