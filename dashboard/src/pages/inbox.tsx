import type { ApiHumanRequest } from "cairn/client";
import { api } from "../api";
import { AnswerForm } from "../components/answer-form";
import { JsonView } from "../components/json-view";
import { RequestContext } from "../components/request-context";
import { Link } from "../components/link";
import { ErrorBox, Loaded } from "../components/status";
import { ago, dateTime } from "../format";
import { usePolling } from "../hooks";
import { runPath } from "../router";

/** Questions runs wait on, oldest first, each answerable in one click. */
export function InboxPage() {
  const pending = usePolling(() => api.listHumanRequests({ status: "pending" }), 2000, []);
  const answered = usePolling(() => api.listHumanRequests({ status: "answered" }), 5000, []);
  const now = Date.now();
  return (
    <section>
      <header className="page-header">
        <h1>Human requests</h1>
        <span className="muted">{pending.data ? `${pending.data.length} waiting for an answer` : ""}</span>
      </header>
      <ErrorBox error={pending.error} />
      {pending.data?.length === 0 && <p className="muted empty">Nothing waits for a person. 🎉</p>}
      <div className="cards">
        {pending.data
          ?.slice()
          .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
          .map((request) => (
            <article className="card question" key={request.requestId} data-request-id={request.requestId}>
              <div className="card-head">
                <Link href={runPath(request.runId)} className="mono">
                  {request.runId}
                </Link>
                <span className="muted mono"> · {request.opKey}</span>
                <span className="muted right" title={request.createdAt}>
                  asked {ago(request.createdAt, now)}
                  {request.timeoutAt ? ` · expires ${ago(request.timeoutAt, now)}` : ""}
                </span>
              </div>
              <p className="question-text">{request.question}</p>
              {request.refused ? (
                <p className="field-error" data-refused>
                  The previous answer was refused: {request.refused.message}
                </p>
              ) : null}
              <RequestContext context={request.context} />
              <AnswerForm request={request} onAnswered={pending.refresh} />
            </article>
          ))}
      </div>
      <h2>Answered</h2>
      <Loaded polled={answered}>
        {(requests) => (requests.length === 0 ? <p className="muted">None yet.</p> : <AnsweredTable requests={requests} now={now} />)}
      </Loaded>
    </section>
  );
}

/** Answered requests, newest first; one closed by its timeout says so instead of naming a person. */
function AnsweredTable({ requests, now }: { requests: ApiHumanRequest[]; now: number }) {
  return (
    <table>
      <thead>
        <tr>
          <th>question</th>
          <th>run</th>
          <th>answer</th>
          <th>by</th>
          <th>answered</th>
          <th>waited</th>
        </tr>
      </thead>
      <tbody>
        {requests
          .slice()
          .sort((a, b) => (b.answeredAt ?? "").localeCompare(a.answeredAt ?? ""))
          .slice(0, 50)
          .map((request) => (
            <tr key={request.requestId}>
              <td>{request.question}</td>
              <td className="mono">
                <Link href={runPath(request.runId)}>{request.runId}</Link>
              </td>
              <td>
                <b>{request.answer?.action === "answer" ? request.answer.option : request.answer?.action}</b>{" "}
                {request.answer?.value !== undefined && <JsonView value={request.answer.value} max={40} />}
              </td>
              <td>{request.answer?.by === "timeout" ? <span className="muted">timed out</span> : (request.answer?.by ?? "—")}</td>
              <td title={dateTime(request.answeredAt)}>{ago(request.answeredAt, now)}</td>
              <td>{request.answeredAt ? waited(request.createdAt, request.answeredAt) : "—"}</td>
            </tr>
          ))}
      </tbody>
    </table>
  );
}

function waited(from: string, to: string): string {
  return ago(from, Date.parse(to)).replace(" ago", "");
}
