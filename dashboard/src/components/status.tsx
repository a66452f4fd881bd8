import type { ApiRun } from "cairn/client";

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
