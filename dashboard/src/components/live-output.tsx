// A running model call's output, streamed as deltas (not journaled) until its step's entry comes.

/** One coalesced piece of a running model call's output: thinking, text, or a tool call's arguments so far. */
export interface LivePiece {
  kind: "text" | "thinking" | "tool-input";
  text: string;
  id?: string;
  name?: string;
}

/** A running model call's output so far, by attempt (a new attempt starts over). */
export interface LiveOutput {
  opKey: string;
  attempt: number;
  pieces: LivePiece[];
}

export function livePiece(data: unknown): LivePiece | undefined {
  const d = data as { kind?: unknown; text?: unknown; id?: unknown; name?: unknown } | null;
  if (!d || typeof d.text !== "string" || (d.kind !== "text" && d.kind !== "thinking" && d.kind !== "tool-input")) return undefined;
  return {
    kind: d.kind,
    text: d.text,
    ...(typeof d.id === "string" ? { id: d.id } : {}),
    ...(typeof d.name === "string" ? { name: d.name } : {}),
  };
}

/** Appends a piece, coalesced with the last one of its kind (and tool call); another step or attempt, or `startsOver`, begins afresh. */
export function addPiece(previous: LiveOutput | undefined, opKey: string, attempt: number, piece: LivePiece, startsOver: boolean): LiveOutput {
  const same = previous && previous.opKey === opKey && previous.attempt === attempt && !startsOver;
  const pieces = same ? [...previous.pieces] : [];
  const last = pieces.at(-1);
  if (last && last.kind === piece.kind && last.id === piece.id) pieces[pieces.length - 1] = { ...last, text: last.text + piece.text };
  else pieces.push(piece);
  return { opKey, attempt, pieces };
}

/**
 * The running model call's thinking, text and tool-call arguments as they stream. In an agent's
 * transcript it is the pending assistant message (`asMessage`), in order after the journaled ones;
 * elsewhere a box of its own.
 */
export function LiveOutputView({ output, asMessage = false }: { output: LiveOutput; asMessage?: boolean }) {
  const head = (
    <span className={asMessage ? "msg-pending-head muted" : undefined}>
      {asMessage ? "writing… " : "Live output "}
      <span className="muted mono">{output.opKey}</span>
      {output.attempt > 1 && <span className="muted"> · attempt {output.attempt} (an earlier attempt was abandoned)</span>}
    </span>
  );
  const pieces = output.pieces.map((piece, i) =>
    piece.kind === "thinking" ? (
      <div key={i} className="live-thinking muted" data-live-kind="thinking">
        (thinking) {piece.text}
      </div>
    ) : piece.kind === "tool-input" ? (
      <div key={i} className="tool-use" data-live-kind="tool-input" data-live-tool-call={piece.id}>
        → call <b>{piece.name}</b> <span className="muted mono">{piece.id}</span> <code className="mono">{piece.text}</code>
      </div>
    ) : (
      <div key={i} className="msg-text" data-live-kind="text">
        {piece.text}
      </div>
    ),
  );
  if (asMessage)
    return (
      <li
        className="msg msg-assistant msg-pending"
        data-role="assistant"
        data-pending=""
        data-live-op={output.opKey}
        data-live-attempt={output.attempt}
        aria-label="live model output"
        aria-busy="true"
      >
        <span className="msg-role">assistant</span>
        <div className="live-output-body">
          {head}
          {pieces}
        </div>
      </li>
    );
  return (
    <div className="live-output" data-live-op={output.opKey} data-live-attempt={output.attempt} aria-label="live model output">
      <h3>{head}</h3>
      {pieces}
    </div>
  );
}
