import type { ApiRun } from "cairn/client";
import type { ReactNode } from "react";

export function StatusBadge({ status }: { status: ApiRun["status"] }) {
  return (
    <span className={`badge status-${status}`} data-status={status}>
      {status}
    </span>
  );
}

export function ErrorBox({ error }: { error: Error | undefined }) {
  if (!error) return null;
  return (
    <div className="error-box" role="alert">
      {error.message}
    </div>
  );
}

/**
 * A panel's polled data: "Loading…" until the first answer, what went wrong when it never loaded
 * (not an empty state, which would claim there is nothing), else `children(data)` with a note
 * when the latest refresh failed.
 */
export function Loaded<T>({ polled, children }: { polled: { data: T | undefined; error: Error | undefined }; children: (data: T) => ReactNode }) {
  if (polled.data === undefined) {
    if (polled.error)
      return (
        <p className="err" data-load-error>
          Could not load: {polled.error.message}
        </p>
      );
    return <p className="muted">Loading…</p>;
  }
  return (
    <>
      {polled.error && (
        <p className="err small" data-load-error>
          Not refreshed: {polled.error.message}
        </p>
      )}
      {children(polled.data)}
    </>
  );
}
