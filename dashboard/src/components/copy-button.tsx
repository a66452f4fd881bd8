import { useEffect, useState } from "react";

/** Copies `text` to the clipboard, or, where the Clipboard API is unavailable, through a hidden selection. */
export async function copyText(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) {
    try {
      await navigator.clipboard.writeText(text);
      return;
    } catch {
      // denied (no permission, not focused): fall back below
    }
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  const done = document.execCommand("copy");
  area.remove();
  if (!done) throw new Error("the browser refused to copy");
}

/** A button that copies `text` and says so (or why not) in a live region. */
export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [state, setState] = useState<"idle" | "copied" | string>("idle");
  useEffect(() => {
    if (state !== "copied") return;
    const timer = setTimeout(() => setState("idle"), 2000);
    return () => clearTimeout(timer);
  }, [state]);
  return (
    <span className="copy">
      <button
        type="button"
        className="small-button"
        data-copy
        onClick={() => {
          copyText(text).then(
            () => setState("copied"),
            (error: unknown) => setState(`Could not copy: ${(error as Error).message}`),
          );
        }}
      >
        {label}
      </button>
      <span role="status" className={state === "idle" || state === "copied" ? "muted small-note" : "err small-note"}>
        {state === "copied" ? "Copied" : state === "idle" ? "" : state}
      </span>
    </span>
  );
}
