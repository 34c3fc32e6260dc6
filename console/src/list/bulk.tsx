import { useState } from "preact/hooks";
import { type Api, ApiError, newCommandId } from "../api.ts";

/** Cancels the selected runs, one request each; says how many were cancelled and which were refused. */
export function BulkCancel(props: { api: Api; selected: readonly string[]; onDone: () => void }) {
  const [busy, setBusy] = useState(false);
  const [report, setReport] = useState<{ text: string; bad: boolean } | null>(null);
  const count = props.selected.length;

  const cancelAll = async () => {
    if (!window.confirm(`Cancel ${count} run${count === 1 ? "" : "s"}? A runner gets 30 s to stop its agent.`)) return;
    setBusy(true);
    setReport(null);
    const refused: string[] = [];
    await Promise.all(
      props.selected.map((runId) =>
        props.api
          .cancel(runId, { commandId: newCommandId("bulk-cancel"), reason: "cancelled from the runs list" })
          .catch((error: unknown) => {
            refused.push(`${runId} (${error instanceof ApiError ? error.message : String(error)})`);
          }),
      ),
    );
    const done = count - refused.length;
    setReport({
      text: `Cancelled ${done} of ${count}.${refused.length ? ` Refused: ${refused.join("; ")}` : ""}`,
      bad: refused.length > 0,
    });
    setBusy(false);
    props.onDone();
  };

  return (
    <section class="bulk-bar" aria-label="Selected runs">
      <span>{count === 0 ? "Select runs to cancel them together" : `${count} selected`}</span>
      <button type="button" class="button bad" disabled={count === 0 || busy} onClick={() => void cancelAll()}>
        {busy ? "Cancelling…" : `Cancel selected${count ? ` (${count})` : ""}`}
      </button>
      {report && (
        <span class={`notice ${report.bad ? "bad" : "good"}`} role="status">
          {report.text}
        </span>
      )}
    </section>
  );
}
