/**
 * Where an adapter sends the pieces of a streamed response: the request's `onDelta` and, for text,
 * its `onTextDelta`. A listener that throws is ignored: live display must not fail the call.
 */
import type { ModelDelta, ModelRequest } from "./model.js";

/** The request's delta listeners as one function, or undefined when it has none (then adapters need not stream). */
export function deltaSink(request: ModelRequest): ((delta: ModelDelta) => void) | undefined {
  const { onDelta, onTextDelta } = request;
  if (!onDelta && !onTextDelta) return undefined;
  return (delta) => {
    if (delta.kind !== "tool-input" && delta.text === "") return;
    try {
      onDelta?.(delta);
      if (delta.kind === "text") onTextDelta?.(delta.text);
    } catch {
      // A display listener's failure is not the model call's.
    }
  };
}
