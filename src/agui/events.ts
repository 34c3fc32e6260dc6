import { AGUI_EVENT_TYPES, AguiEventType as T, ControlEventType, type RunEvent } from "../protocol/index.ts";

/**
 * A run's log as one AG-UI run (docs/AGUI.md). Every log event becomes exactly one AG-UI event,
 * so a client that counts what it received knows the seq it has reached:
 * - an AG-UI event the client knows passes through as `{type, ...data}`;
 * - the agent's own RUN_STARTED / RUN_FINISHED / RUN_ERROR (one per turn for some agents), events
 *   of ours (control events, `approval.requested`, `agent.session`, usage) and anything else
 *   become CUSTOM `{name: type, value: data}`, since AG-UI allows nothing after a RUN_FINISHED and
 *   nothing before the first RUN_STARTED;
 * - `run.finished` becomes RUN_FINISHED (succeeded) or RUN_ERROR (failed, cancelled, timed out).
 * Each response opens with a RUN_STARTED of its own, which has no seq; one resumed inside an open
 * message also sends that message's START again, without a seq (reopen.ts).
 */

export type AguiEvent = { type: string } & Record<string, unknown>;

/** The agent's turn boundaries: as CUSTOM, so they neither end the stream's one run nor nest in it. */
const TURN_EVENTS: ReadonlySet<string> = new Set([T.RUN_STARTED, T.RUN_FINISHED, T.RUN_ERROR]);

export function runStarted(runId: string): AguiEvent {
  return { type: T.RUN_STARTED, threadId: runId, runId };
}

export function aguiEvent(event: RunEvent, runId: string): AguiEvent {
  if (event.type === ControlEventType.RUN_FINISHED) return runEnded(event.data, runId);
  const { data } = event;
  const passes = AGUI_EVENT_TYPES.has(event.type) && !TURN_EVENTS.has(event.type) && isRecord(data);
  if (passes) {
    const { type: _, ...fields } = data;
    return { type: event.type, ...fields };
  }
  return { type: T.CUSTOM, name: event.type, value: data ?? null };
}

function runEnded(data: unknown, runId: string): AguiEvent {
  const outcome = isRecord(data) && isRecord(data.outcome) ? data.outcome : {};
  const status = typeof outcome.status === "string" ? outcome.status : "failed";
  if (status === "succeeded") {
    return { type: T.RUN_FINISHED, threadId: runId, runId, outcome: { type: "success" }, result: outcome };
  }
  const error = isRecord(outcome.error) ? outcome.error : {};
  const message = typeof error.message === "string" && error.message !== "" ? error.message : `run ${status}`;
  return { type: T.RUN_ERROR, message, code: typeof error.code === "string" ? error.code : status };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const encoder = new TextEncoder();

/** AG-UI's SSE encoding (`data: <json>` and a blank line), with `id:` our seq when the event has one. */
export function sseFrame(event: AguiEvent, seq: number | null): string {
  // JSON.stringify escapes every line break, so the event is always one data line.
  return `${seq === null ? "" : `id: ${seq}\n`}data: ${JSON.stringify(event)}\n\n`;
}

/** An SSE comment: clients skip it; it keeps idle connections (and the proxies on the way) open. */
export const HEARTBEAT = encoder.encode(": keep-alive\n\n");

export function encodeStarted(runId: string): Uint8Array {
  return encoder.encode(sseFrame(runStarted(runId), null));
}
