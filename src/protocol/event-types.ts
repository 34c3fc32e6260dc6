import { AGENT_USAGE } from "./usage.ts";

// The names of every event type a run's log holds, in one place for the edge, the bridge, the SDK
// and the console. docs/PROTOCOL.md describes each one's data.

/** AG-UI's event types (`@ag-ui/core` EventType), so no consumer needs a runtime dependency on it. */
export const AguiEventType = {
  TEXT_MESSAGE_START: "TEXT_MESSAGE_START",
  TEXT_MESSAGE_CONTENT: "TEXT_MESSAGE_CONTENT",
  TEXT_MESSAGE_END: "TEXT_MESSAGE_END",
  TEXT_MESSAGE_CHUNK: "TEXT_MESSAGE_CHUNK",
  TOOL_CALL_START: "TOOL_CALL_START",
  TOOL_CALL_ARGS: "TOOL_CALL_ARGS",
  TOOL_CALL_END: "TOOL_CALL_END",
  TOOL_CALL_CHUNK: "TOOL_CALL_CHUNK",
  TOOL_CALL_RESULT: "TOOL_CALL_RESULT",
  STATE_SNAPSHOT: "STATE_SNAPSHOT",
  STATE_DELTA: "STATE_DELTA",
  MESSAGES_SNAPSHOT: "MESSAGES_SNAPSHOT",
  ACTIVITY_SNAPSHOT: "ACTIVITY_SNAPSHOT",
  ACTIVITY_DELTA: "ACTIVITY_DELTA",
  RAW: "RAW",
  CUSTOM: "CUSTOM",
  RUN_STARTED: "RUN_STARTED",
  RUN_FINISHED: "RUN_FINISHED",
  RUN_ERROR: "RUN_ERROR",
  STEP_STARTED: "STEP_STARTED",
  STEP_FINISHED: "STEP_FINISHED",
  REASONING_START: "REASONING_START",
  REASONING_MESSAGE_START: "REASONING_MESSAGE_START",
  REASONING_MESSAGE_CONTENT: "REASONING_MESSAGE_CONTENT",
  REASONING_MESSAGE_END: "REASONING_MESSAGE_END",
  REASONING_MESSAGE_CHUNK: "REASONING_MESSAGE_CHUNK",
  REASONING_END: "REASONING_END",
  REASONING_ENCRYPTED_VALUE: "REASONING_ENCRYPTED_VALUE",
  SUBAGENT_STARTED: "SUBAGENT_STARTED",
  SUBAGENT_FINISHED: "SUBAGENT_FINISHED",
  SUBAGENT_ERROR: "SUBAGENT_ERROR",
  /** Older AG-UI names for reasoning, still sent by some agents. */
  THINKING_START: "THINKING_START",
  THINKING_END: "THINKING_END",
  THINKING_TEXT_MESSAGE_START: "THINKING_TEXT_MESSAGE_START",
  THINKING_TEXT_MESSAGE_CONTENT: "THINKING_TEXT_MESSAGE_CONTENT",
  THINKING_TEXT_MESSAGE_END: "THINKING_TEXT_MESSAGE_END",
} as const;
export type AguiEventTypeName = (typeof AguiEventType)[keyof typeof AguiEventType];

/**
 * The prefix each family of AG-UI event types shares (`TEXT_MESSAGE_START`, `_CONTENT`, ...), for
 * code that handles a family whole, including members a later AG-UI adds.
 */
export const AguiEventFamily = {
  TEXT_MESSAGE: "TEXT_MESSAGE_",
  TOOL_CALL: "TOOL_CALL_",
  REASONING: "REASONING_",
  THINKING: "THINKING_",
} as const;

/** The types an AG-UI client knows, current names only (the THINKING_* aliases are not in the set). */
export const AGUI_EVENT_TYPES: ReadonlySet<string> = new Set(
  Object.values(AguiEventType).filter((type) => !type.startsWith("THINKING_")),
);

/** Runner event types that are ours, not AG-UI's. */
export const AgentEventType = {
  /** Opens an approval on the edge; data `{requestId, ...}`. */
  APPROVAL_REQUESTED: "approval.requested",
  /** The agent's own session identity (codex thread, claude session), for resuming it later. */
  AGENT_SESSION: "agent.session",
  /** Provider usage since the previous report (usage.ts UsageDelta). */
  AGENT_USAGE,
} as const;
export type AgentEventTypeName = (typeof AgentEventType)[keyof typeof AgentEventType];
export const OWN_EVENT_TYPES: ReadonlySet<string> = new Set(Object.values(AgentEventType));

/** Event types the run object itself writes (source `control`). */
export const ControlEventType = {
  RUN_CREATED: "run.created",
  RUN_CLAIMED: "run.claimed",
  RUN_STALLED: "run.stalled",
  RUN_RESUMED: "run.resumed",
  RUN_RECOVERING: "run.recovering",
  RUN_RECOVERY_DECIDED: "run.recovery.decided",
  RUN_RECOVERY_AUTOMATIC: "run.recovery.automatic",
  RUN_GENERATION_STARTED: "run.generation.started",
  RUN_CHECKPOINT: "run.checkpoint",
  RUN_FINISHED: "run.finished",
  COMMAND_QUEUED: "command.queued",
  COMMAND_ACKED: "command.acked",
  APPROVAL_RESOLVED: "approval.resolved",
  APPROVAL_EXPIRED: "approval.expired",
} as const;
export type ControlEventTypeName = (typeof ControlEventType)[keyof typeof ControlEventType];
export const CONTROL_EVENT_TYPES: ReadonlySet<string> = new Set(Object.values(ControlEventType));
