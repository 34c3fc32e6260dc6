import { statusLabel } from "../status.tsx";

/** No runs: say how to make one (the demo does it all), or that the filters hide them. */
export function EmptyRuns({ filtered, status }: { filtered: boolean; status: string }) {
  if (filtered) {
    return (
      <div class="card empty-state">
        <p>{status ? `No ${statusLabel(status).toLowerCase()} runs match.` : "No runs match these filters."}</p>
      </div>
    );
  }
  return (
    <div class="card empty-state" data-empty="no-runs">
      <h2>No runs yet</h2>
      <p>Start one: the demo runs an agent under runner-bridge against this server, and it shows up here.</p>
      <pre class="json">npm run demo</pre>
      <p class="muted small">
        Or create one yourself:{" "}
        <code>
          npx agent-run create --input '{"{"}"prompt":"say hi"{"}"}'
        </code>
        , then run its agent with the <code>runner-bridge</code> command the run's page shows.
      </p>
    </div>
  );
}
