import { useRef, useState } from "preact/hooks";
import type { CommandRecord } from "../../../src/protocol/index.ts";
import { type Api, ApiError, newCommandId } from "../api.ts";
import { type Note, Notice, ReasonInput } from "./action-parts.tsx";
import type { TrackedCommand } from "./commands.ts";

/** Input, Interrupt and Cancel (with confirmation), and each command's state as the log reports it. */
export interface ControlsProps {
  api: Api;
  runId: string;
  canSteer: boolean;
  ended: boolean;
  commands: readonly TrackedCommand[];
  onSent: (command: CommandRecord) => void;
}

type Kind = "input" | "interrupt" | "cancel";

function refusal(error: unknown): string {
  if (error instanceof ApiError && error.code === "terminal_run") return "The run has ended; it takes no commands.";
  return (error as Error).message;
}

const STATE_TONE: Record<string, string> = {
  queued: "pill-muted",
  delivered: "pill-info",
  applied: "pill-good",
  rejected: "pill-bad",
  unknown: "pill-warn",
};

function CommandList({ commands }: { commands: readonly TrackedCommand[] }) {
  if (commands.length === 0) return <p class="muted small">No commands yet.</p>;
  return (
    <ul class="command-list">
      {commands.map((command) => (
        <li key={command.commandId} class="command" data-command-id={command.commandId} data-state={command.state}>
          <span class="command-type">{command.type}</span>
          <span class="command-text">
            {command.text ?? (command.decision ? `${command.decision} ${command.requestId ?? ""}` : "")}
          </span>
          <span class={`pill ${STATE_TONE[command.state] ?? "pill-muted"}`}>{command.state}</span>
        </li>
      ))}
    </ul>
  );
}

export function Controls(props: ControlsProps) {
  const [text, setText] = useState("");
  const [reason, setReason] = useState("");
  /** Commands on their way; each button waits only for its own (an interrupt never waits for an input). */
  const [sending, setSending] = useState<ReadonlySet<Kind>>(new Set());
  const [note, setNote] = useState<Note | null>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const disabled = (kind: Kind) => props.ended || sending.has(kind);

  const send = (kind: Kind, work: () => Promise<CommandRecord | null>, done: string) => {
    setSending((current) => new Set(current).add(kind));
    setNote(null);
    work()
      .then((command) => {
        if (command) props.onSent(command);
        setNote({ tone: "good", text: done });
      })
      .catch((error: unknown) => setNote({ tone: "bad", text: refusal(error) }))
      .finally(() =>
        setSending((current) => {
          const next = new Set(current);
          next.delete(kind);
          return next;
        }),
      );
  };

  const sendInput = (event: Event) => {
    event.preventDefault();
    const value = text.trim();
    if (!value || disabled("input")) return;
    send(
      "input",
      async () => {
        const { command } = await props.api.command(props.runId, {
          commandId: newCommandId("input"),
          type: "input",
          text: value,
        });
        setText("");
        return command;
      },
      "Input sent.",
    );
  };

  const interrupt = () =>
    send(
      "interrupt",
      async () =>
        (await props.api.command(props.runId, { commandId: newCommandId("interrupt"), type: "interrupt" })).command,
      "Interrupt sent.",
    );

  const confirmCancel = (event: Event) => {
    event.preventDefault();
    dialog.current?.close();
    const why = reason.trim();
    send(
      "cancel",
      async () => {
        const body = why ? { commandId: newCommandId("cancel"), reason: why } : { commandId: newCommandId("cancel") };
        return (await props.api.cancel(props.runId, body)).command;
      },
      "Cancel sent.",
    );
  };

  return (
    <section class="controls card" aria-label="Commands">
      <h2>Commands</h2>
      {props.canSteer ? (
        <>
          <form class="command-form" onSubmit={sendInput}>
            <label for="command-input">Send input to the agent</label>
            <textarea
              id="command-input"
              rows={2}
              value={text}
              placeholder={props.ended ? "The run has ended" : "Type a message; Enter sends, Shift+Enter adds a line"}
              disabled={props.ended}
              readOnly={sending.has("input")}
              onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
              onKeyDown={(e) => {
                if (e.key === "Enter" && !e.shiftKey && !e.isComposing) sendInput(e);
              }}
            />
            <div class="command-buttons">
              <button type="submit" class="button primary" disabled={disabled("input") || text.trim() === ""}>
                Send
              </button>
              <button type="button" class="button" onClick={interrupt} disabled={disabled("interrupt")}>
                Interrupt
              </button>
              <button
                type="button"
                class="button bad"
                onClick={() => dialog.current?.showModal()}
                disabled={disabled("cancel")}
              >
                Cancel run…
              </button>
            </div>
          </form>
          <dialog ref={dialog} class="dialog" aria-labelledby="cancel-title">
            <form method="dialog" onSubmit={confirmCancel}>
              <h3 id="cancel-title">Cancel run {props.runId}?</h3>
              <p>The runner stops the agent. A cancelled run cannot be resumed.</p>
              <label for="cancel-reason">Reason (optional)</label>
              <ReasonInput id="cancel-reason" value={reason} onChange={setReason} />
              <div class="dialog-buttons">
                <button type="button" class="button" onClick={() => dialog.current?.close()}>
                  Keep running
                </button>
                <button type="submit" class="button bad">
                  Cancel run
                </button>
              </div>
            </form>
          </dialog>
        </>
      ) : (
        <p class="muted small">This link is read-only: it shows the run but cannot steer it.</p>
      )}
      <Notice note={note} />
      <h3 class="subhead">Recent commands</h3>
      <CommandList commands={props.commands} />
    </section>
  );
}
