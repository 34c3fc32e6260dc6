import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Api, ApiError, type RunsPage } from "../api.ts";
import { absoluteTime, relativeTime } from "../format.ts";
import { ProblemView } from "../problem.tsx";
import { onLinkClick, runPath } from "../route.ts";
import type { Credential } from "../session.ts";
import { type RowPlacement, usePlacements } from "./placement.ts";
import { FILTER_STATUSES, StatusBadge, statusLabel } from "../status.tsx";

/** The tenant's runs, newest first, refreshed every few seconds, filtered by status, paged by cursor. */
export const RUNS_PER_PAGE = 25;
const REFRESH_MS = 2000;

export interface ListPageProps {
  credential: Credential;
  onSignIn: () => void;
}

function readStatusFilter(): string {
  return new URLSearchParams(location.search).get("status") ?? "";
}

function PlacementCells({ placement }: { placement: RowPlacement | undefined }) {
  return (
    <>
      <td data-queue-position>
        {placement?.position ?? <span class="muted">—</span>}
        {placement?.reason && <span class="placement-reason">{placement.reason}</span>}
      </td>
      <td data-host>{placement?.host ? <code>{placement.host}</code> : <span class="muted">—</span>}</td>
    </>
  );
}

export function ListPage({ credential, onSignIn }: ListPageProps) {
  const api = useMemo(() => new Api(credential), [credential.secret]);
  const [status, setStatus] = useState(readStatusFilter);
  /** Cursors of the pages before this one (the first page has none). */
  const [cursors, setCursors] = useState<string[]>([]);
  const [page, setPage] = useState<RunsPage | null>(null);
  const [problem, setProblem] = useState<ApiError | null>(null);
  const [stale, setStale] = useState(false);
  const [now, setNow] = useState(Date.now());
  const cursor = cursors[cursors.length - 1];
  const request = useRef(0);
  const placements = usePlacements(api, page?.runs);

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const load = () => {
      const id = ++request.current;
      const query = { limit: RUNS_PER_PAGE, ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) };
      api
        .listRuns(query)
        .then((next) => {
          if (id !== request.current) return;
          setPage(next);
          setStale(false);
          setNow(Date.now());
        })
        .catch((error: unknown) => {
          if (id !== request.current) return;
          if (error instanceof ApiError && error.status !== 0) {
            stopped = true;
            setProblem(error);
          } else setStale(true); // keep what is shown; the next refresh tries again
        })
        .finally(() => {
          if (!stopped) timer = setTimeout(load, REFRESH_MS);
        });
    };
    load();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [api, status, cursor]);

  const chooseStatus = (next: string) => {
    const url = new URL(location.href);
    if (next) url.searchParams.set("status", next);
    else url.searchParams.delete("status");
    history.replaceState(null, "", url);
    setStatus(next);
    setCursors([]);
    setPage(null);
  };

  if (problem) {
    return (
      <main class="page">
        <ProblemView error={problem} credential={credential} onSignIn={onSignIn} />
      </main>
    );
  }

  const statuses = new Set(FILTER_STATUSES);
  for (const run of page?.runs ?? []) statuses.add(run.status);
  if (status) statuses.add(status);
  return (
    <main class="page list-page">
      <div class="list-head">
        <h1>Runs</h1>
        <label class="status-filter">
          Status
          <select value={status} onChange={(e) => chooseStatus((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">All statuses</option>
            {[...statuses].map((value) => (
              <option key={value} value={value}>
                {statusLabel(value)}
              </option>
            ))}
          </select>
        </label>
        <span class="muted small refresh-note" role="status">
          {stale ? "Server unreachable; showing the last answer" : "Updates every few seconds"}
        </span>
      </div>
      {page === null ? (
        <p class="loading" role="status">
          Loading runs…
        </p>
      ) : page.runs.length === 0 ? (
        <div class="card empty-state">
          <p>{status ? `No ${statusLabel(status).toLowerCase()} runs.` : "No runs yet."}</p>
          {!status && (
            <pre class="json">
              {"curl -X POST http://localhost:8787/v1/runs \\\n  -H 'authorization: Bearer <api key>' -d '{}'"}
            </pre>
          )}
        </div>
      ) : (
        <table class="runs card">
          <caption class="sr-only">Runs, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Updated</th>
              <th scope="col">Queue position</th>
              <th scope="col">Host</th>
            </tr>
          </thead>
          <tbody>
            {page.runs.map((run) => (
              <tr key={run.runId} data-run-id={run.runId}>
                <th scope="row">
                  <a href={runPath(run.runId)} onClick={onLinkClick}>
                    {run.runId}
                  </a>
                </th>
                <td>
                  <StatusBadge status={run.status} />
                </td>
                <td>
                  <time dateTime={run.createdAt} title={absoluteTime(run.createdAt)}>
                    {relativeTime(run.createdAt, now)}
                  </time>
                </td>
                <td>
                  <time dateTime={run.updatedAt} title={absoluteTime(run.updatedAt)}>
                    {relativeTime(run.updatedAt, now)}
                  </time>
                </td>
                <PlacementCells placement={placements.get(run.runId)} />
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="pager" aria-label="Pages of runs">
        <button
          type="button"
          class="button"
          disabled={cursors.length === 0}
          onClick={() => {
            setCursors(cursors.slice(0, -1));
            setPage(null);
          }}
        >
          ← Newer
        </button>
        <span class="muted small">Page {cursors.length + 1}</span>
        <button
          type="button"
          class="button"
          disabled={!page?.nextCursor}
          onClick={() => {
            if (page?.nextCursor) setCursors([...cursors, page.nextCursor]);
            setPage(null);
          }}
        >
          Older →
        </button>
      </nav>
    </main>
  );
}
