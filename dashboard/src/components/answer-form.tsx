import type { ApiHumanRequest } from "cairn/client";
import { useRef, useState } from "react";
import { api } from "../api";
import { schemaIssues, useValueEditor } from "./value-editor";

const RECOVERY = ["retry", "skip", "fail"] as const;

/**
 * One click per option. A request with an `input` schema gets a value editor (a field per property,
 * or JSON) whose value goes with the option, or with "Send" when there are no options; the server's
 * 422 for a value that does not match shows next to the fields. A "did this happen?" request (an
 * unsafe step after a crash) takes retry / skip / fail instead; a note and name go with the answer. The
 * note is required for the options the request says need one (`requireNote`): the field says so, and
 * an answer without it is not sent.
 */
export function AnswerForm({ request, onAnswered }: { request: ApiHumanRequest; onAnswered?: () => void }) {
  const [message, setMessage] = useState("");
  const [by, setBy] = useState(() => localStorage.getItem("cairn.by") ?? "");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [value, setValue] = useState("");
  const [issues, setIssues] = useState<Record<string, string>>({});
  // The option chosen without the note it needs: the field is marked until a note is written.
  const [missingNote, setMissingNote] = useState<string>();
  const noteField = useRef<HTMLInputElement>(null);
  const requireNote = (request as { requireNote?: true | string[] | null }).requireNote ?? null;
  const needsNote = (option?: string) => requireNote === true || (option !== undefined && Array.isArray(requireNote) && requireNote.includes(option));
  const noteFor = requireNote === true ? "every answer" : Array.isArray(requireNote) && requireNote.length > 0 ? requireNote.join(", ") : undefined;
  // The engine's "did this happen?" request about an unsafe step offers exactly these actions.
  const recovery = request.options.join() === RECOVERY.join();
  const valueEditor = useValueEditor(request.input, issues);
  // A value goes with the answer when the request declares its shape, or asks freely (no options).
  const takesValue = !recovery && (request.input !== null || request.options.length === 0);
  const withValue = (option?: string) => {
    if (needsNote(option) && !message.trim()) {
      setMissingNote(option ?? "this answer");
      setError(undefined);
      noteField.current?.focus();
      return;
    }
    const read = takesValue ? valueEditor.read() : ({ ok: true, value: undefined } as const);
    if (!read.ok) {
      setError(read.error);
      return;
    }
    void send({ action: "answer", ...(option === undefined ? {} : { option }), ...(read.value === undefined ? {} : { value: read.value }) });
  };

  const send = async (body: Parameters<typeof api.answer>[1]) => {
    setBusy(true);
    setError(undefined);
    setIssues({});
    try {
      if (by) localStorage.setItem("cairn.by", by);
      await api.answer(request.requestId, { ...body, ...(message ? { message } : {}), ...(by ? { by } : {}) });
      onAnswered?.();
    } catch (caught) {
      const message = (caught as Error).message;
      const byField = (caught as { status?: number }).status === 422 && valueEditor.fields ? schemaIssues(message) : undefined;
      if (byField) setIssues(byField);
      setError(byField ? "The server refused this value (422): see the fields marked in red." : message);
    } finally {
      setBusy(false);
    }
  };

  const buttons = (
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
        : request.options.length > 0
          ? request.options.map((option, i) => (
              <button
                key={option}
                disabled={busy}
                className={i === 0 ? "primary" : ""}
                onClick={() => withValue(option)}
                title={needsNote(option) ? "Needs a note" : undefined}
              >
                {option}
              </button>
            ))
          : [
              <button key="send" disabled={busy} className="primary" onClick={() => withValue()}>
                Send answer
              </button>,
            ]}
    </div>
  );
  const extras = (
    <div className="answer-extra">
      {recovery && <input aria-label="value for skip" placeholder="step result for skip (JSON)" value={value} onChange={(e) => setValue(e.target.value)} />}
      <input
        aria-label="note"
        ref={noteField}
        placeholder={noteFor ? `note (required for ${noteFor})` : "note (optional)"}
        value={message}
        onChange={(e) => {
          setMessage(e.target.value);
          if (e.target.value.trim()) setMissingNote(undefined);
        }}
        aria-required={requireNote === true ? true : undefined}
        aria-invalid={missingNote ? true : undefined}
        aria-describedby={missingNote ? `note-required-${request.requestId}` : undefined}
        data-note-required={noteFor ? "" : undefined}
      />
      <input aria-label="your name" placeholder="your name" value={by} onChange={(e) => setBy(e.target.value)} className="short" />
    </div>
  );
  return (
    <div className="answer-form">
      {takesValue && valueEditor.editor}
      {/* With a value to fill in, the note and name come before the send button(s). */}
      {takesValue ? extras : buttons}
      {takesValue ? buttons : extras}
      {missingNote && (
        <div className="note-required" role="alert" id={`note-required-${request.requestId}`} data-note-missing={missingNote}>
          {missingNote === "this answer" ? "A note is required" : `“${missingNote}” requires a note`}: write one, then answer again.
        </div>
      )}
      {error && <div className="error-box">{error}</div>}
    </div>
  );
}
