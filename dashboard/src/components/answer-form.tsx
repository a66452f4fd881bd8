import type { ApiHumanRequest } from "cairn/client";
import { useState } from "react";
import { api } from "../api";

const RECOVERY = ["retry", "skip", "fail"] as const;

/**
 * One click per option. A "did this happen?" request (an unsafe step after a crash) takes
 * retry / skip / fail instead; an optional note and name go with the answer.
 */
export function AnswerForm({ request, onAnswered }: { request: ApiHumanRequest; onAnswered?: () => void }) {
  const [message, setMessage] = useState("");
  const [by, setBy] = useState(() => localStorage.getItem("cairn.by") ?? "");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [value, setValue] = useState("");
  // The engine's "did this happen?" request about an unsafe step offers exactly these actions.
  const recovery = request.options.join() === RECOVERY.join();

  const send = async (body: Parameters<typeof api.answer>[1]) => {
    setBusy(true);
    setError(undefined);
    try {
      if (by) localStorage.setItem("cairn.by", by);
      await api.answer(request.requestId, { ...body, ...(message ? { message } : {}), ...(by ? { by } : {}) });
      onAnswered?.();
    } catch (caught) {
      setError((caught as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="answer-form">
      <div className="answer-buttons">
        {recovery
          ? RECOVERY.map((action) => (
              <button
                key={action}
                disabled={busy}
                className={action === "fail" ? "danger" : ""}
                onClick={() => {
                  try {
                    void send(action === "skip" && value.trim() ? { action, value: JSON.parse(value) as unknown } : { action });
                  } catch {
                    setError('The value for skip must be JSON, e.g. {"id":"ch_1"} or "done".');
                  }
                }}
              >
                {action}
              </button>
            ))
          : request.options.map((option, i) => (
              <button key={option} disabled={busy} className={i === 0 ? "primary" : ""} onClick={() => void send({ action: "answer", option })}>
                {option}
              </button>
            ))}
      </div>
      <div className="answer-extra">
        {recovery && <input aria-label="value for skip" placeholder="step result for skip (JSON)" value={value} onChange={(e) => setValue(e.target.value)} />}
        <input aria-label="note" placeholder="note (optional)" value={message} onChange={(e) => setMessage(e.target.value)} />
        <input aria-label="your name" placeholder="your name" value={by} onChange={(e) => setBy(e.target.value)} className="short" />
      </div>
      {error && <div className="error-box">{error}</div>}
    </div>
  );
}
