import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from "preact/hooks";
import type { CommandRecord, RunEvent, RunRecord } from "../../../src/protocol/index.ts";
import { Api, ApiError } from "../api.ts";
import { ProblemView } from "../problem.tsx";
import { onLinkClick, replaceFragment } from "../route.ts";
import { abilities, type Credential, readFragment, writeFragment } from "../session.ts";
import { isTerminalStatus } from "../status.tsx";
import { RecoveryPanel } from "./recovery.tsx";
import { Transcript } from "../transcript/model.ts";
import { TranscriptView } from "../transcript/view.tsx";
import { copyText, DownloadButton, ShareButton } from "./actions.tsx";
import { Approvals } from "./approvals.tsx";
import { CommandTracker } from "./commands.ts";
import { Controls } from "./controls.tsx";
import { Notifications } from "./notifications.tsx";
import { type LiveState, RunFeed } from "./feed.ts";
import { RunHeader } from "./header.tsx";
import { QueuedHint } from "./queued.tsx";
import { RerunButton, RerunLinks } from "./rerun.tsx";
import { reportsUsage } from "../usage.ts";
import { Timeline } from "../timeline/view.tsx";

/** The run page: header, pending approvals, the live transcript and the command controls. */
export interface RunPageProps {
  runId: string;
  credential: Credential;
  hash: string;
  onSignIn: () => void;
}

const SOCKET_TOKEN_TTL_MS = 60 * 60 * 1000;
/** Control events after which the run record (status, runner, approvals) is read again. */
const RECORD_CHANGES = /^(run\.|approval\.)/;

function useNow(intervalMs: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}

/**
 * The record a read brings, kept no older than what the page has already seen: a read that
 * started before the run ended may answer after the `end` frame set the final status, and an
 * ended run never runs again.
 */
function newerRecord(current: RunRecord | null, read: RunRecord): RunRecord {
  if (current && isTerminalStatus(current.status) && !isTerminalStatus(read.status)) return current;
  return { ...read, lastSeq: Math.max(read.lastSeq, current?.lastSeq ?? 0) };
}

export function RunPage(props: RunPageProps) {
  const { runId, credential } = props;
  const api = useMemo(() => new Api(credential), [credential.secret]);
  const may = abilities(credential);
  const [run, setRun] = useState<RunRecord | null>(null);
  const [problem, setProblem] = useState<ApiError | null>(null);
  const [live, setLive] = useState<LiveState>("connecting");
  const [attempt, retry] = useReducer((n: number) => n + 1, 0);
  const [version, bump] = useReducer((n: number) => n + 1, 0);
  const [toast, setToast] = useState<string | null>(null);
  const [view, setView] = useState<"conversation" | "timeline">("conversation");
  const transcript = useRef(new Transcript());
  const tracker = useRef(new CommandTracker(false));
  const feed = useRef<RunFeed | null>(null);
  const socketToken = useRef<{ token: string; expires: number } | null>(null);
  const reading = useRef<{ again: boolean } | null>(null);
  /** Whether a runner held the run when the page opened: the guess for commands before any claim in view. */
  const runnerAtOpen = useRef(false);
  const now = useNow(5000);
  const target = readFragment(props.hash).seq;

  /** Reads the run record again; calls that arrive meanwhile make one more read afterwards. */
  const refresh = useCallback(() => {
    if (reading.current) {
      reading.current.again = true;
      return;
    }
    const state = { again: false };
    reading.current = state;
    api
      .getRun(runId)
      .then((record) => setRun((current) => newerRecord(current, record)))
      .catch((error: unknown) => {
        if (error instanceof ApiError && error.status !== undefined) setProblem(error);
      })
      .finally(() => {
        reading.current = null;
        if (state.again) refresh();
      });
  }, [api, runId]);

  // `attempt` restarts the page when the reader asks to try again.
  useEffect(() => {
    let cancelled = false;
    setRun(null);
    setProblem(null);
    transcript.current = new Transcript();
    tracker.current = new CommandTracker(false);
    const mintSocketToken = async (fresh: boolean) => {
      if (credential.kind === "token") return credential.secret;
      const cached = socketToken.current;
      if (!fresh && cached && cached.expires - Date.now() > 5 * 60_000) return cached.token;
      // The watch socket takes its credential in the URL, so an API key never goes there: a
      // short-lived read-only viewer token does.
      const minted = await api.mintToken(runId, { role: "viewer", ttlMs: SOCKET_TOKEN_TTL_MS });
      socketToken.current = { token: minted.token, expires: Date.now() + SOCKET_TOKEN_TTL_MS };
      return minted.token;
    };
    const rebuild = (events: readonly RunEvent[]) => {
      transcript.current = new Transcript(events);
      const commands = new CommandTracker(next.hasEarlier && runnerAtOpen.current);
      commands.adopt(tracker.current);
      for (const event of events) commands.apply(event);
      tracker.current = commands;
    };
    const next = new RunFeed(api, runId, mintSocketToken, {
      appended(events) {
        for (const event of events) {
          transcript.current.add(event);
          tracker.current.apply(event);
        }
        const last = events[events.length - 1];
        if (last) setRun((current) => current && { ...current, lastSeq: Math.max(current.lastSeq, last.seq) });
        if (events.some((event) => RECORD_CHANGES.test(event.type) || reportsUsage(event))) refresh();
        bump(0);
      },
      reset() {
        rebuild(next.events);
        bump(0);
      },
      live: setLive,
      status(status) {
        setRun((current) => current && { ...current, status: status as RunRecord["status"] });
        refresh();
      },
      refused: setProblem,
    });
    api
      .getRun(runId)
      .then(async (record) => {
        if (cancelled) return;
        runnerAtOpen.current = record.runner.connected;
        setRun(record);
        feed.current = next;
        await next.open(record.lastSeq);
      })
      .catch((error: unknown) => {
        if (!cancelled) setProblem(error instanceof ApiError ? error : new ApiError("error", String(error)));
      });
    return () => {
      cancelled = true;
      next.dispose();
      if (feed.current === next) feed.current = null;
    };
  }, [api, runId, attempt]);

  // The lease and runner change without events; read the record now and then while the run lives.
  const running = run !== null && !isTerminalStatus(run.status);
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(refresh, 10_000);
    return () => clearInterval(timer);
  }, [running, refresh]);

  const copyLink = useRef<(seq: number) => void>(() => undefined);
  copyLink.current = (seq: number) => {
    const fragment = writeFragment({ token: credential.kind === "token" ? credential.secret : null, seq });
    replaceFragment(fragment);
    copyText(`${location.origin}${location.pathname}${fragment}`)
      .then((copied) =>
        setToast(copied ? `Link to event #${seq} copied.` : `Link to event #${seq} is in the address bar.`),
      )
      .catch(() => setToast(null));
  };
  const onCopyLink = useCallback((seq: number) => copyLink.current(seq), []);
  const loadEarlier = useCallback(() => feed.current?.loadEarlier() ?? Promise.resolve(), []);
  const reach = useCallback((seq: number) => feed.current?.reach(seq) ?? Promise.resolve(), []);
  /** A timeline bar: back to the conversation, at its first event's row. */
  const onPick = useCallback(
    (seq: number) => {
      setView("conversation");
      replaceFragment(writeFragment({ token: credential.kind === "token" ? credential.secret : null, seq }));
    },
    [credential],
  );
  const onSent = useCallback(
    (command: CommandRecord) => {
      tracker.current.sentCommand(command);
      bump(0);
      refresh();
    },
    [refresh],
  );

  if (problem) {
    return (
      <main class="page">
        <ProblemView
          error={problem}
          credential={credential}
          runId={runId}
          onSignIn={props.onSignIn}
          onRetry={() => retry(0)}
        />
      </main>
    );
  }
  if (!run) {
    return (
      <main class="page">
        <p class="loading" role="status">
          Loading run {runId}…
        </p>
      </main>
    );
  }
  const ended = isTerminalStatus(run.status);
  return (
    <main class="page run-page">
      {may.listRuns && (
        <nav class="crumbs" aria-label="Breadcrumb">
          <a href="/" onClick={onLinkClick}>
            Runs
          </a>
          <span aria-hidden="true"> / </span>
          <span>{runId}</span>
        </nav>
      )}
      <RunHeader
        run={run}
        live={live}
        now={now}
        actions={
          <>
            {may.share && <RerunButton api={api} runId={runId} />}
            {may.share && <ShareButton api={api} runId={runId} />}
            <DownloadButton api={api} runId={runId} />
          </>
        }
      />
      <RerunLinks api={api} runId={runId} version={ended ? 1 : 0} />
      <QueuedHint api={api} run={run} canMint={may.share} />
      <RecoveryPanel api={api} run={run} canDecide={may.interact} now={now} onSettled={refresh} />
      <Approvals
        api={api}
        runId={runId}
        approvals={run.pendingApprovals}
        canDecide={may.interact}
        now={now}
        onSettled={refresh}
      />
      <div class="view-tabs" role="tablist" aria-label="Views of the run">
        {(["conversation", "timeline"] as const).map((name) => (
          <button
            key={name}
            type="button"
            role="tab"
            class="chip"
            aria-selected={view === name}
            onClick={() => setView(name)}
          >
            {name === "conversation" ? "Conversation" : "Timeline"}
          </button>
        ))}
      </div>
      <div class="run-grid">
        {view === "timeline" ? (
          <Timeline
            events={feed.current?.events ?? []}
            version={version}
            now={now}
            ended={ended}
            hasEarlier={feed.current?.hasEarlier ?? false}
            loadAll={() => reach(1)}
            onPick={onPick}
          />
        ) : (
          <TranscriptView
            transcript={transcript.current}
            version={version}
            hasEarlier={feed.current?.hasEarlier ?? false}
            loadEarlier={loadEarlier}
            reach={reach}
            lastSeq={run.lastSeq}
            target={target}
            onCopyLink={onCopyLink}
          />
        )}
        <aside class="side">
          <Controls
            api={api}
            runId={runId}
            canSteer={may.interact}
            ended={ended}
            commands={tracker.current.list()}
            onSent={onSent}
          />
          <Notifications api={api} runId={runId} now={now} />
        </aside>
      </div>
      <p class="toast" role="status" aria-live="polite">
        {toast}
      </p>
    </main>
  );
}
