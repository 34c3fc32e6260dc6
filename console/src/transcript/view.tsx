import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { CATEGORIES, type Category, type Row, rowMatches, type Transcript } from "./model.ts";
import { RowView } from "./rows.tsx";

/**
 * The transcript, windowed: at most WINDOW rows are in the DOM, whatever the run's size. It
 * follows the latest row until the reader scrolls up, keeps what the reader looks at in place
 * while rows are added or removed around it, and asks for earlier pages at the top.
 */
export const WINDOW = 200;
const STEP = 80;
const EDGE_PX = 240;

export interface TranscriptViewProps {
  transcript: Transcript;
  version: number;
  hasEarlier: boolean;
  loadEarlier: () => Promise<void>;
  /** Loads earlier pages until this seq is held. */
  reach: (seq: number) => Promise<void>;
  lastSeq: number;
  /** A permalink's seq, scrolled to and highlighted. */
  target: number | null;
  onCopyLink: (seq: number) => void;
}

const ALL = () => new Set<Category>(CATEGORIES.map((c) => c.id));

/** The approval a row of the Approvals category is about: its requestId (or the row, lacking one). */
function approvalKey(row: Row): string {
  const data = row.events[0]?.data as { requestId?: unknown } | null | undefined;
  return typeof data?.requestId === "string" ? `r:${data.requestId}` : `k:${row.key}`;
}

const rowsLabel = (n: number) => `${n} ${n === 1 ? "row" : "rows"}`;

/** First index whose row starts at or after `seq` (rows are ordered by their first seq). */
function lowerBound(rows: readonly Row[], seq: number): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((rows[mid] as Row).firstSeq < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function rowElements(scroller: HTMLElement): HTMLElement[] {
  return Array.from(scroller.querySelectorAll<HTMLElement>("li.row"));
}

export function TranscriptView(props: TranscriptViewProps) {
  const { transcript, version } = props;
  const [categories, setCategories] = useState<Set<Category>>(ALL);
  const [query, setQuery] = useState("");
  const [follow, setFollow] = useState(true);
  const [startSeq, setStartSeq] = useState(0);
  const [loading, setLoading] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const scroller = useRef<HTMLDivElement>(null);
  /** The row at the top of the viewport and its offset, kept while rows change around it. */
  const anchor = useRef<{ key: string; offset: number } | null>(null);
  const scrollToKey = useRef<string | null>(null);
  const handledTarget = useRef<number | null>(null);
  const shiftAfterLoad = useRef(false);
  const needle = query.trim().toLowerCase();

  const visible = useMemo(
    () => transcript.rows.filter((row) => rowMatches(row, categories, needle)),
    [transcript, version, categories, needle],
  );
  const counts = useMemo(() => {
    const tally = new Map<Category, number>();
    // An approval is several rows (asked, the decision sent, resolved): the chip counts approvals.
    const approvals = new Set<string>();
    for (const row of transcript.rows) {
      if (row.category === "approvals") approvals.add(approvalKey(row));
      else tally.set(row.category, (tally.get(row.category) ?? 0) + 1);
    }
    tally.set("approvals", approvals.size);
    return tally;
  }, [transcript, version]);

  let start = follow ? Math.max(0, visible.length - WINDOW) : lowerBound(visible, startSeq);
  if (start >= visible.length) start = Math.max(0, visible.length - WINDOW);
  const end = Math.min(visible.length, start + WINDOW);
  const shown = visible.slice(start, end);
  const targetRow = props.target === null ? undefined : transcript.rowOf(props.target);

  const recordAnchor = () => {
    const el = scroller.current;
    if (!el) return;
    for (const child of rowElements(el)) {
      if (child.offsetTop + child.offsetHeight > el.scrollTop) {
        anchor.current = { key: child.dataset.key ?? "", offset: child.offsetTop - el.scrollTop };
        return;
      }
    }
  };

  const showFrom = (index: number) => {
    const row = visible[Math.max(0, Math.min(index, visible.length - 1))];
    setFollow(false);
    setStartSeq(row?.firstSeq ?? 0);
  };

  const earlier = () => {
    if (start > 0) {
      recordAnchor();
      showFrom(start - STEP);
      return;
    }
    if (!props.hasEarlier || loading) return;
    recordAnchor();
    setFollow(false);
    setStartSeq(visible[start]?.firstSeq ?? 0);
    setLoading(true);
    setProblem(null);
    props
      .loadEarlier()
      .then(() => {
        shiftAfterLoad.current = true;
      })
      .catch((error: unknown) => setProblem(`Could not load earlier events: ${(error as Error).message}`))
      .finally(() => setLoading(false));
  };

  const later = () => {
    recordAnchor();
    showFrom(Math.min(visible.length, end + STEP) - WINDOW);
  };

  const onScroll = () => {
    const el = scroller.current;
    if (!el) return;
    recordAnchor();
    const fromBottom = el.scrollHeight - el.scrollTop - el.clientHeight;
    if (fromBottom < 4 && end === visible.length) {
      if (!follow) setFollow(true);
    } else if (follow && fromBottom > 48) {
      showFrom(start);
    }
    if (el.scrollTop < EDGE_PX && (start > 0 || props.hasEarlier)) earlier();
    else if (!follow && fromBottom < EDGE_PX && end < visible.length) later();
  };

  // After an earlier page arrived, move the window onto it (the reader is still at the top).
  useEffect(() => {
    if (!shiftAfterLoad.current || start === 0) return;
    shiftAfterLoad.current = false;
    recordAnchor();
    showFrom(start - STEP);
  });

  // A permalink: hold its event, make its row pass the filters, then put it in the window.
  useEffect(() => {
    const seq = props.target;
    if (seq === null) handledTarget.current = null;
    if (seq === null || handledTarget.current === seq) return;
    const row = transcript.rowOf(seq);
    if (!row) {
      if (seq <= props.lastSeq && props.hasEarlier) {
        props
          .reach(seq)
          .catch((error: unknown) => setProblem(`Could not load event ${seq}: ${(error as Error).message}`));
      }
      return;
    }
    if (!rowMatches(row, categories, needle)) {
      setCategories(ALL());
      setQuery("");
      return;
    }
    handledTarget.current = seq;
    showFrom(visible.indexOf(row) - 30);
    scrollToKey.current = row.key;
  }, [props.target, version, visible]);

  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const targetKey = scrollToKey.current;
    const find = (key: string) => rowElements(el).find((child) => child.dataset.key === key);
    if (targetKey) {
      const target = find(targetKey);
      if (target) {
        scrollToKey.current = null;
        el.scrollTop = target.offsetTop - Math.max(0, (el.clientHeight - target.offsetHeight) / 2);
        target.focus({ preventScroll: true });
        recordAnchor();
      }
    } else if (follow) {
      el.scrollTop = el.scrollHeight;
    } else if (anchor.current) {
      const row = find(anchor.current.key);
      if (row) el.scrollTop = row.offsetTop - anchor.current.offset;
    }
  });

  const toggle = (id: Category) => {
    const next = new Set(categories);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setCategories(next);
  };
  const missingTarget = props.target !== null && !targetRow && props.target > props.lastSeq;

  return (
    <section class="transcript" aria-label="Transcript">
      <div class="transcript-tools">
        <fieldset class="filters">
          <legend class="sr-only">Show kinds of events</legend>
          <button
            type="button"
            class="chip"
            aria-pressed={categories.size === CATEGORIES.length}
            onClick={() => setCategories(ALL())}
          >
            All
          </button>
          {CATEGORIES.map((c) => (
            <button
              key={c.id}
              type="button"
              class="chip"
              data-category={c.id}
              aria-pressed={categories.has(c.id)}
              onClick={() => toggle(c.id)}
            >
              {c.label} <span class="chip-count">{counts.get(c.id) ?? 0}</span>
            </button>
          ))}
        </fieldset>
        <label class="search">
          <span class="sr-only">Search the transcript</span>
          <input
            type="search"
            placeholder="Search"
            value={query}
            onInput={(e) => setQuery((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <span class="muted shown-count">
          {visible.length === transcript.rows.length
            ? rowsLabel(visible.length)
            : `${visible.length} of ${rowsLabel(transcript.rows.length)}`}
          {props.hasEarlier ? " · earlier events not loaded" : ""}
        </span>
      </div>
      {problem && (
        <p class="notice bad" role="alert">
          {problem}
        </p>
      )}
      {missingTarget && <p class="notice">Event #{props.target} is not in this run yet.</p>}
      <div
        class="transcript-scroll"
        ref={scroller}
        onScroll={onScroll}
        role="log"
        aria-label="Transcript events"
        data-window={`${start}-${end}`}
      >
        <div class="transcript-edge">
          {start > 0 || props.hasEarlier ? (
            <button type="button" class="quiet-button" onClick={earlier} disabled={loading}>
              {loading ? "Loading earlier events…" : "Show earlier events"}
            </button>
          ) : (
            <span class="muted">Beginning of the run</span>
          )}
        </div>
        <ol class="rows">
          {shown.map((row) => (
            <RowView
              key={row.key}
              row={row}
              version={row.version}
              target={row === targetRow}
              onCopyLink={props.onCopyLink}
            />
          ))}
        </ol>
        {shown.length === 0 && <p class="empty muted">No events match.</p>}
        {end < visible.length && (
          <div class="transcript-edge">
            <button type="button" class="quiet-button" onClick={later}>
              Show later events
            </button>
          </div>
        )}
      </div>
      {!follow && (
        <button type="button" class="jump" onClick={() => setFollow(true)}>
          Jump to latest{visible.length > end ? ` · ${visible.length - end} more` : ""}
        </button>
      )}
    </section>
  );
}
