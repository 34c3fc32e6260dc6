import type { CommandFrame, RunnerOutcome } from "../../../src/protocol/index.ts";
import type { Envelope } from "../command-file.ts";
import type { RunSpec } from "../rundir.ts";
import type { ExitInfo } from "../sentinel.ts";

/** One journal line as an event (the bridge adds sourceSeq = line number). */
export interface AgentEvent {
  type: string;
  data?: unknown;
}

/**
 * What to do with a command from the edge:
 * - inbox: append these envelopes (the first carries the command's id) unless already there;
 * - signal: send a signal to the agent's process group;
 * - defer: not yet possible (e.g. the journal line it answers has not been read yet); retried later;
 * - reject: ack `rejected`.
 */
export type CommandPlan =
  | { kind: "inbox"; envelopes: Envelope[] }
  | { kind: "signal"; signal: NodeJS.Signals }
  | { kind: "defer" }
  | { kind: "reject"; reason: string };

export interface LineResult {
  event: AgentEvent;
  /** Inbox writes the adapter makes in reaction (each group is written once, keyed by its first id). */
  reactions?: Envelope[][];
}

export interface OutcomeContext {
  cancelled: boolean;
  stderrTail: string;
}

export interface Adapter {
  readonly name: string;
  /** Inbox envelopes written before the agent starts (protocol handshakes, the first prompt). */
  startup(spec: RunSpec): Envelope[];
  /** Maps one journal line to exactly one event. Must be deterministic given the lines before it. */
  onLine(text: string): LineResult;
  /** Plans an input, interrupt or approval command (cancel is handled by the bridge itself). */
  command(cmd: CommandFrame): CommandPlan;
  outcome(exit: ExitInfo, ctx: OutcomeContext): RunnerOutcome;
}
