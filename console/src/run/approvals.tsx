import { Fragment } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { ApprovalSummary } from "../../../src/protocol/index.ts";
import { type Api, ApiError } from "../api.ts";
import { absoluteTime, prettyJson, relativeTime } from "../format.ts";
import { type Note, Notice, ReasonInput } from "./action-parts.tsx";

/** Pending approvals, pinned above the transcript, with Approve / Deny for those who may decide. */
export interface ApprovalsProps {
  api: Api;
  runId: string;
  approvals: readonly ApprovalSummary[];
  canDecide: boolean;
  now: number;
  /** Called after a decision (or a refusal), so the page re-reads the run. */
  onSettled: () => void;
}

/** Request fields that identify rather than describe (codex sends its thread, turn and item ids). */
const IDENTIFIERS = /(Id|AtMs)$|^(method|timestamp)$/;

function Fields({ entries }: { entries: [string, unknown][] }) {
  return (
    <dl class="kv">
      {entries.map(([name, value]) => (
        <Fragment key={name}>
          <dt>{name}</dt>
          <dd>
            <code>{typeof value === "string" ? value : JSON.stringify(value)}</code>
          </dd>
        </Fragment>
      ))}
    </dl>
  );
}

/**
 * The request's fields as a short list, what it asks first and the ids it carries folded (the
 * requestId is in the title; the agent's native message, `rawEvent`, is in the transcript row's
 * JSON); anything else as JSON.
 */
function RequestData({ data }: { data: unknown }) {
  if (typeof data === "object" && data !== null && !Array.isArray(data)) {
    const { requestId: _, rawEvent: _native, ...asked } = data as Record<string, unknown>;
    const entries = Object.entries(asked);
    if (entries.length > 0 && entries.length <= 16) {
      const ids = entries.filter(([name]) => IDENTIFIERS.test(name));
      const main = entries.filter(([name]) => !IDENTIFIERS.test(name));
      return (
        <>
          {main.length > 0 && <Fields entries={main} />}
          {ids.length > 0 && (
            <details class="approval-ids">
              <summary>{ids.map(([name]) => name).join(", ")}</summary>
              <Fields entries={ids} />
            </details>
          )}
        </>
      );
    }
    return <pre class="json approval-data">{prettyJson(asked)}</pre>;
  }
  return <pre class="json approval-data">{prettyJson(data)}</pre>;
}

/**
 * The request of an approval: inline in its summary when small, else fetched from its own route
 * (GET /v1/runs/:runId/approvals/:requestId) once the card shows.
 */
function useRequest(api: Api, runId: string, approval: ApprovalSummary): { data: unknown } | { failed: string } | null {
  const [fetched, setFetched] = useState<{ data: unknown } | { failed: string } | null>(null);
  const { truncated, requestId } = approval;
  useEffect(() => {
    if (!truncated) return;
    let live = true;
    api
      .approval(runId, requestId)
      .then((full) => live && setFetched({ data: full.data }))
      .catch((error: unknown) => live && setFetched({ failed: (error as Error).message }));
    return () => {
      live = false;
    };
  }, [api, runId, requestId, truncated]);
  return truncated === true ? fetched : { data: approval.data };
}

function Request(props: { api: Api; runId: string; approval: ApprovalSummary }) {
  const request = useRequest(props.api, props.runId, props.approval);
  if (request === null) return <p class="muted">Loading the request ({props.approval.bytes} bytes)…</p>;
  if ("failed" in request) return <p class="notice warn">Could not load the request: {request.failed}</p>;
  return <RequestData data={request.data} />;
}

type CardProps = Omit<ApprovalsProps, "approvals"> & {
  approval: ApprovalSummary;
  note: Note | undefined;
  setNote: (note: Note | null) => void;
};

function ApprovalCard(props: CardProps) {
  const { approval, now, note, setNote } = props;
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const expired = approval.expiresAt !== undefined && Date.parse(approval.expiresAt) <= now;
  const decided = note?.tone === "good";

  const decide = (decision: "approve" | "deny") => {
    setBusy(true);
    setNote(null);
    const body = reason.trim() ? { decision, reason: reason.trim() } : { decision };
    props.api
      .approve(props.runId, approval.requestId, body)
      .then(() => setNote({ tone: "good", text: decision === "approve" ? "Approved." : "Denied." }))
      .catch((error: unknown) => {
        if (error instanceof ApiError && error.status === 409) {
          setNote({ tone: "warn", text: `This approval is no longer pending: ${error.message}` });
        } else {
          setNote({ tone: "bad", text: `Could not send the decision: ${(error as Error).message}` });
        }
      })
      .finally(() => {
        setBusy(false);
        props.onSettled();
      });
  };

  const id = `approval-${approval.requestId.replaceAll(/[^A-Za-z0-9_-]/g, "_")}`;
  return (
    <li class="approval" data-request-id={approval.requestId} aria-labelledby={`${id}-title`}>
      <div class="approval-head">
        <h3 id={`${id}-title`}>
          Approval <code>{approval.requestId}</code>
        </h3>
        <span class="muted">
          requested{" "}
          <time dateTime={approval.createdAt} title={absoluteTime(approval.createdAt)}>
            {relativeTime(approval.createdAt, now)}
          </time>{" "}
          · event #{approval.requestedSeq}
        </span>
        {approval.expiresAt && (
          <span class={expired ? "pill pill-bad" : "pill pill-warn"}>
            {expired ? "expired" : `expires ${relativeTime(approval.expiresAt, now)}`}
          </span>
        )}
      </div>
      <Request api={props.api} runId={props.runId} approval={approval} />
      {expired && <p class="notice warn">This approval has expired; the agent was told no.</p>}
      {props.canDecide && !expired && !decided && (
        <div class="approval-actions">
          <label class="grow" for={`${id}-reason`}>
            <span class="sr-only">Reason (optional)</span>
            <ReasonInput
              id={`${id}-reason`}
              value={reason}
              onChange={setReason}
              placeholder="Reason (optional)"
              disabled={busy}
            />
          </label>
          <button type="button" class="button good" onClick={() => decide("approve")} disabled={busy}>
            Approve
          </button>
          <button type="button" class="button bad" onClick={() => decide("deny")} disabled={busy}>
            Deny
          </button>
        </div>
      )}
      <Notice note={note} />
    </li>
  );
}

export function Approvals(props: ApprovalsProps) {
  // Notes outlive their card: a decided or stale approval leaves the pending list, its note stays.
  const [notes, setNotes] = useState<ReadonlyMap<string, Note>>(new Map());
  const setNote = (requestId: string) => (note: Note | null) =>
    setNotes((current) => {
      const next = new Map(current);
      if (note) next.set(requestId, note);
      else next.delete(requestId);
      return next;
    });
  const pending = props.approvals.filter((approval) => approval.state === "pending");
  const settled = [...notes].filter(([requestId]) => !pending.some((a) => a.requestId === requestId));
  if (pending.length === 0 && settled.length === 0) return null;
  // The yellow panel is for what waits on someone; once nothing does, only the notes stay.
  return (
    <section class={pending.length > 0 ? "approvals card" : "approvals-settled"} aria-label="Approvals">
      {pending.length > 0 && (
        <>
          <h2>
            Waiting for {pending.length === 1 ? "an approval" : `${pending.length} approvals`}
            {!props.canDecide && <span class="muted"> · read-only link: you can watch, not decide</span>}
          </h2>
          <ul class="approval-list">
            {pending.map((approval) => (
              <ApprovalCard
                key={approval.requestId}
                {...props}
                approval={approval}
                note={notes.get(approval.requestId)}
                setNote={setNote(approval.requestId)}
              />
            ))}
          </ul>
        </>
      )}
      {settled.map(([requestId, note]) => (
        <p key={requestId} class={`notice ${note.tone}`} role="status">
          <code>{requestId}</code>: {note.text}{" "}
          <button type="button" class="link-button" onClick={() => setNote(requestId)(null)}>
            Dismiss
          </button>
        </p>
      ))}
    </section>
  );
}
