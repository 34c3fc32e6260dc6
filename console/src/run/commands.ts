import { type CommandRecord, type CommandState, ControlEventType, type RunEvent } from "../../../src/protocol/index.ts";
import { fields } from "../fields.ts";

/**
 * Each command's state as the log tells it: `command.queued` opens it, `command.acked` moves it,
 * and a new claim (`run.claimed`) makes whatever was delivered `unknown` and delivers whatever
 * was queued — the same steps the run object takes. A command this page sent starts from the
 * state the API answered with, since the log does not say whether it went straight out.
 */
export interface TrackedCommand {
  commandId: string;
  type: string;
  text?: string;
  decision?: string;
  requestId?: string;
  state: CommandState | string;
  seq: number | null;
  /** The state was guessed from whether a runner held the run, not read from the log or the API. */
  guessed?: boolean;
}

const RANK: Record<string, number> = {
  queued: 0,
  delivered: 1,
  unknown: 2,
  applied: 3,
  rejected: 3,
  "never delivered": 3,
};
const rank = (state: string) => RANK[state] ?? 0;

export class CommandTracker {
  private readonly commands = new Map<string, TrackedCommand>();
  private readonly sent = new Map<string, CommandRecord>();
  private runnerHolds: boolean;

  constructor(runnerConnected: boolean) {
    this.runnerHolds = runnerConnected;
  }

  /** The API's answer to a command this page sent. */
  sentCommand(record: CommandRecord): void {
    this.sent.set(record.commandId, record);
    const known = this.commands.get(record.commandId);
    if (known && (known.guessed || rank(record.state) > rank(known.state))) {
      known.state = record.state;
      known.guessed = false;
    }
    if (!known) {
      this.commands.set(record.commandId, { ...this.fromRecord(record), seq: null });
    }
  }

  apply(event: RunEvent): void {
    const data = fields(event.data);
    switch (event.type) {
      case ControlEventType.COMMAND_QUEUED: {
        const commandId = String(data.commandId ?? "");
        const sent = this.sent.get(commandId);
        const state = sent?.state ?? (this.runnerHolds ? "delivered" : "queued");
        const command: TrackedCommand = { commandId, type: String(data.type ?? "command"), state, seq: event.seq };
        if (!sent) command.guessed = true;
        if (typeof data.text === "string") command.text = data.text;
        if (typeof data.decision === "string") command.decision = data.decision;
        if (typeof data.requestId === "string") command.requestId = data.requestId;
        const known = this.commands.get(commandId);
        if (known && rank(known.state) > rank(command.state)) {
          command.state = known.state;
          command.guessed = false;
        }
        this.commands.delete(commandId);
        this.commands.set(commandId, command);
        break;
      }
      case ControlEventType.COMMAND_ACKED: {
        const command = this.commands.get(String(data.commandId ?? ""));
        if (command && typeof data.state === "string") {
          command.state = data.state;
          command.guessed = false;
        }
        break;
      }
      case ControlEventType.RUN_CLAIMED:
        this.runnerHolds = true;
        for (const command of this.commands.values()) {
          if (command.state === "delivered") command.state = "unknown";
          else if (command.state === "queued") command.state = "delivered";
        }
        break;
      case ControlEventType.RUN_RESUMED:
        this.runnerHolds = true;
        break;
      case ControlEventType.RUN_STALLED:
        this.runnerHolds = false;
        break;
      case ControlEventType.RUN_FINISHED:
        // The run ended: a command no runner ever took never will be.
        this.runnerHolds = false;
        for (const command of this.commands.values()) {
          if (command.state === "queued") {
            command.state = "never delivered";
            command.guessed = false;
          }
        }
        break;
    }
  }

  /** Carries over what this page sent when the tracker is rebuilt from a longer range of the log. */
  adopt(previous: CommandTracker): void {
    for (const record of previous.sent.values()) this.sentCommand(record);
  }

  /** Newest first. */
  list(limit = 12): TrackedCommand[] {
    return [...this.commands.values()].reverse().slice(0, limit);
  }

  get size(): number {
    return this.commands.size;
  }

  private fromRecord(record: CommandRecord): Omit<TrackedCommand, "seq"> {
    const command: Omit<TrackedCommand, "seq"> = {
      commandId: record.commandId,
      type: record.type,
      state: record.state,
    };
    if (record.text !== undefined) command.text = record.text;
    if (record.decision !== undefined) command.decision = record.decision;
    if (record.requestId !== undefined) command.requestId = record.requestId;
    return command;
  }
}
