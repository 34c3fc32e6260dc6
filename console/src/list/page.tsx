import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Api, ApiError, type RunsPage } from "../api.ts";
import { absoluteTime, relativeTime } from "../format.ts";
import { ProblemView } from "../problem.tsx";
import { onLinkClick, runPath } from "../route.ts";
import type { Credential } from "../session.ts";
import { FILTER_STATUSES, isTerminalStatus, StatusBadge, statusLabel } from "../status.tsx";
import { BulkCancel } from "./bulk.tsx";
import { useRunDetails } from "./details.ts";
import { EmptyRuns } from "./empty.tsx";
import {
  fromLocalInput,
  type ListFilters,
  localInput,
  matchesFilters,
  metaOf,
  readFilters,
  serverKey,
  tagsOf,
  writeFilters,
} from "./filters.ts";
import { DetailCells, DETAIL_HEADINGS } from "./row-details.tsx";
import { PlacementCells, usePlacements } from "./placement.tsx";

/** The tenant's runs, newest first, refreshed every few seconds, filtered by status, paged by cursor. */
export const RUNS_PER_PAGE = 25;
const NO_FILTERS: ListFilters = {
  status: "",
  agent: "",
  q: "",
  tags: "",
  meta: "",
  createdAfter: "",
  createdBefore: "",
};
const REFRESH_MS = 2000;

export interface ListPageProps {
  credential: Credential;
  onSignIn: () => void;
}

export function ListPage({ credential, onSignIn }: ListPageProps) {
  const api = useMemo(() => new Api(credential), [credential.secret]);
  const [filters, setFilters] = useState<ListFilters>(readFilters);
  const status = filters.status;
  const asked = serverKey(filters);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [reload, setReload] = useState(0);
  /** Cursors of the pages before this one (the first page has none). */
  const [cursors, setCursors] = useState<string[]>([]);
  const [page, setPage] = useState<RunsPage | null>(null);
  const [problem, setProblem] = useState<ApiError | null>(null);
  const [stale, setStale] = useState(false);
  const [now, setNow] = useState(Date.now());
  const cursor = cursors[cursors.length - 1];
  const request = useRef(0);

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const load = () => {
      const id = ++request.current;
      const query = {
        limit: RUNS_PER_PAGE,
        tags: tagsOf(filters),
        meta: metaOf(filters),
        ...(status ? { status } : {}),
        ...(filters.createdAfter ? { createdAfter: filters.createdAfter } : {}),
        ...(filters.createdBefore ? { createdBefore: filters.createdBefore } : {}),
        ...(cursor ? { cursor } : {}),
      };
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
          if (error instanceof ApiError && error.status !== undefined) {
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
    // `asked` stands for every filter the server is asked; the others filter the page shown.
  }, [api, asked, cursor, reload]);
  const details = useRunDetails(api, page?.runs);
  const placements = usePlacements(api, page?.runs);

  /** Filters live in the URL (`?status=…&tag=…&meta.KEY=…&createdAfter=…`), so a filtered list is a link. */
  const chooseFilters = (next: ListFilters) => {
    writeFilters(next);
    if (serverKey(next) !== asked) {
      setCursors([]);
      setPage(null);
    }
    setFilters(next);
  };
  const chooseStatus = (next: string) => chooseFilters({ ...filters, status: next });

  if (problem) {
    return (
      <main class="page">
        <ProblemView error={problem} credential={credential} onSignIn={onSignIn} />
      </main>
    );
  }

  const shownRuns = (page?.runs ?? []).filter((run) => matchesFilters(filters, run, details.get(run.runId)));
  const cancellable = shownRuns.filter((run) => !isTerminalStatus(run.status)).map((run) => run.runId);
  const chosen = cancellable.filter((runId) => selected.has(runId));
  const toggle = (runId: string) => {
    const next = new Set(selected);
    if (next.has(runId)) next.delete(runId);
    else next.add(runId);
    setSelected(next);
  };
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
        <label class="text-filter">
          Agent
          <input
            type="search"
            value={filters.agent}
            placeholder="any"
            onInput={(e) => chooseFilters({ ...filters, agent: (e.currentTarget as HTMLInputElement).value })}
          />
        </label>
        <label class="text-filter">
          Tags
          <input
            type="search"
            value={filters.tags}
            placeholder="all of…"
            onInput={(e) => chooseFilters({ ...filters, tags: (e.currentTarget as HTMLInputElement).value })}
          />
        </label>
        <label class="text-filter">
          Metadata
          <input
            type="search"
            value={filters.meta}
            placeholder="key=value…"
            onInput={(e) => chooseFilters({ ...filters, meta: (e.currentTarget as HTMLInputElement).value })}
          />
        </label>
        <label class="text-filter">
          Created after
          <input
            type="datetime-local"
            value={localInput(filters.createdAfter)}
            onChange={(e) =>
              chooseFilters({ ...filters, createdAfter: fromLocalInput((e.currentTarget as HTMLInputElement).value) })
            }
          />
        </label>
        <label class="text-filter">
          Created before
          <input
            type="datetime-local"
            value={localInput(filters.createdBefore)}
            onChange={(e) =>
              chooseFilters({ ...filters, createdBefore: fromLocalInput((e.currentTarget as HTMLInputElement).value) })
            }
          />
        </label>
        <label class="text-filter">
          Run id
          <input
            type="search"
            value={filters.q}
            placeholder="contains…"
            onInput={(e) => chooseFilters({ ...filters, q: (e.currentTarget as HTMLInputElement).value })}
          />
        </label>
        <span class="muted small refresh-note" role="status">
          {stale ? "Server unreachable; showing the last answer" : "Updates every few seconds"}
        </span>
      </div>
      {page === null ? (
        <p class="loading" role="status">
          Loading runs…
        </p>
      ) : shownRuns.length === 0 ? (
        <EmptyRuns filtered={page.runs.length > 0 || asked !== serverKey(NO_FILTERS)} status={status} />
      ) : (
        <>
          <BulkCancel
            api={api}
            selected={chosen}
            onDone={() => {
              setSelected(new Set());
              setReload((n) => n + 1);
            }}
          />
          <table class="runs card">
            <caption class="sr-only">Runs, newest first</caption>
            <thead>
              <tr>
                <th scope="col" class="select-cell">
                  <input
                    type="checkbox"
                    aria-label="Select every run that can be cancelled"
                    disabled={cancellable.length === 0}
                    checked={cancellable.length > 0 && chosen.length === cancellable.length}
                    onChange={() => setSelected(new Set(chosen.length === cancellable.length ? [] : cancellable))}
                  />
                </th>
                <th scope="col">Run</th>
                <th scope="col">Status</th>
                {DETAIL_HEADINGS.map((heading) => (
                  <th key={heading} scope="col">
                    {heading}
                  </th>
                ))}
                <th scope="col">Created</th>
                <th scope="col">Updated</th>
                <th scope="col">Queue position</th>
                <th scope="col">Host</th>
              </tr>
            </thead>
            <tbody>
              {shownRuns.map((run) => (
                <tr key={run.runId} data-run-id={run.runId}>
                  <td class="select-cell">
                    <input
                      type="checkbox"
                      aria-label={`Select ${run.runId}`}
                      disabled={isTerminalStatus(run.status)}
                      checked={selected.has(run.runId) && !isTerminalStatus(run.status)}
                      onChange={() => toggle(run.runId)}
                    />
                  </td>
                  <th scope="row">
                    <a href={runPath(run.runId)} onClick={onLinkClick}>
                      {run.runId}
                    </a>
                  </th>
                  <td class="status-cell">
                    <StatusBadge status={run.status} />
                  </td>
                  <DetailCells run={run} record={details.get(run.runId)} now={now} />
                  <td class="created-cell">
                    <time dateTime={run.createdAt} title={absoluteTime(run.createdAt)}>
                      {relativeTime(run.createdAt, now)}
                    </time>
                  </td>
                  <td class="updated-cell">
                    <time dateTime={run.updatedAt} title={absoluteTime(run.updatedAt)}>
                      {relativeTime(run.updatedAt, now)}
                    </time>
                  </td>
                  <PlacementCells placement={placements.get(run.runId)} />
                </tr>
              ))}
            </tbody>
          </table>
        </>
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
