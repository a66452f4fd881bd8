import { useState } from "react";
import { checkToken, forgetToken, saveToken, type AuthProblem } from "../api";

const CREATE = "npx cairn token create --name me --scope read,write";

/**
 * What a tab sees when the server runs with `--auth tokens` and it has no usable token: why, a
 * field to paste one (checked before it is kept), and how to create one.
 */
export function TokenPanel({ problem, token }: { problem: AuthProblem; token: string | null }) {
  const [draft, setDraft] = useState("");
  const [refused, setRefused] = useState<string>();
  const [checking, setChecking] = useState(false);
  const heading = problem.status === 403 ? "This token cannot read runs" : token ? "This token was refused" : "This server needs an API token";
  const submit = async () => {
    const text = draft.trim();
    if (!text) return;
    setChecking(true);
    setRefused(undefined);
    try {
      const failure = await checkToken(text);
      if (failure === undefined) saveToken(text);
      else setRefused(failure);
    } catch (caught) {
      setRefused(`The server did not answer: ${(caught as Error).message}`);
    } finally {
      setChecking(false);
    }
  };
  return (
    <section className="token-panel" aria-label="API token">
      <h1>{heading}</h1>
      {problem.status === 403 || token ? (
        <p className="err" data-problem>
          {problem.message}
        </p>
      ) : (
        <p>
          This <code>cairn serve</code> runs with <code>--auth tokens</code>: the dashboard needs an API token to show runs. Paste one below; it is kept in this
          browser tab only (until you close it or forget it) and sent with each call to the API.
        </p>
      )}
      <form
        className="token-form"
        onSubmit={(event) => {
          event.preventDefault();
          void submit();
        }}
      >
        <input
          type="password"
          aria-label="API token"
          placeholder="cairn_…"
          autoComplete="off"
          spellCheck={false}
          value={draft}
          onChange={(e) => {
            setDraft(e.target.value);
            setRefused(undefined);
          }}
        />
        <button className="primary" type="submit" disabled={checking || !draft.trim()}>
          {checking ? "Checking…" : "Use token"}
        </button>
        {token && (
          <button type="button" onClick={forgetToken}>
            Forget token
          </button>
        )}
      </form>
      {refused && (
        <div className="error-box" role="alert" data-refused>
          That token was refused: {refused}
        </div>
      )}
      <p className="muted">
        No token yet? Create one where the server&apos;s store is (it is shown once):
        <br />
        <code className="command">{CREATE}</code>
        <br />
        <code>read</code> lets you look; <code>write</code> lets you start, cancel and retry runs and answer questions.
      </p>
    </section>
  );
}
