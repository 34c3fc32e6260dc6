import { useState } from "preact/hooks";
import type { RecoverBody, RunRecord } from "../../../src/protocol/index.ts";
import { type Api, ApiError, newCommandId } from "../api.ts";
import { absoluteTime, relativeTime } from "../format.ts";
import { type Note, Notice } from "./action-parts.tsx";

// A run whose sandbox was lost waits in `recovering`: what the evidence allows, when it gives up,
// and the operator's three decisions (docs/PROTOCOL.md, "Recovery").

type Action = RecoverBody["action"];

const MODE_TEXT: Record<string, string> = {
  restart:
    "The agent never reported a session and stored no events, so starting over is safe: the next `runner-bridge run` claims the run from scratch.",
  resume:
    "A checkpoint covers every stored event: `runner-bridge resume` on a new sandbox continues the agent's own session as the next generation.",
  ambiguous:
    "The evidence does not say how to go on safely (no checkpoint, or events after it). Decide: resume from the checkpoint, restart the agent, or fail the run.",
};

const DONE_TEXT: Record<Action, string> = {
  resume: "Resume chosen: start `runner-bridge resume` on a new sandbox.",
  restart: "Restart chosen: the next `runner-bridge run` starts the agent over.",
  fail: "The run was failed.",
};

const capitalised = (text: string) => (text ? `${text[0]?.toUpperCase() ?? ""}${text.slice(1)}` : text);

export function RecoveryPanel(props: {
  api: Api;
  run: RunRecord;
  canDecide: boolean;
  now: number;
  onSettled: () => void;
}) {
  const { run, now } = props;
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<Note | null>(null);
  const recovery = run.recovery;
  if (run.status !== "recovering" || !recovery) return null;
  const resumable = run.nativeSession !== null && run.checkpoint !== null;

  const decide = (action: Action) => {
    setBusy(true);
    setNote(null);
    props.api
      .recover(run.id, { action, commandId: newCommandId("recover") })
      .then(() => setNote({ tone: "good", text: DONE_TEXT[action] }))
      .catch((error: unknown) => {
        const text = error instanceof ApiError ? `${error.code}: ${error.message}` : (error as Error).message;
        setNote({ tone: error instanceof ApiError && error.status === 409 ? "warn" : "bad", text });
      })
      .finally(() => {
        setBusy(false);
        props.onSettled();
      });
  };

  return (
    <section class="recovery card" aria-labelledby="recovery-title" data-mode={recovery.mode}>
      <h2 id="recovery-title">
        Recovering · <span class="recovery-mode">{recovery.mode}</span>
      </h2>
      <p>{MODE_TEXT[recovery.mode] ?? recovery.reason}</p>
      <p class="muted small">
        {capitalised(recovery.reason)}. Fails (<code>runner_lost</code>){" "}
        <time dateTime={recovery.deadline} title={absoluteTime(recovery.deadline)}>
          {relativeTime(recovery.deadline, now)}
        </time>{" "}
        unless recovered.
      </p>
      {props.canDecide && (
        <div class="recovery-actions">
          <button
            type="button"
            class="button primary"
            disabled={busy || !resumable}
            title={resumable ? undefined : "Needs a reported agent session and a checkpoint"}
            onClick={() => decide("resume")}
          >
            Resume
          </button>
          <button type="button" class="button" disabled={busy} onClick={() => decide("restart")}>
            Restart
          </button>
          <button type="button" class="button bad" disabled={busy} onClick={() => decide("fail")}>
            Fail run
          </button>
        </div>
      )}
      <Notice note={note} />
    </section>
  );
}
