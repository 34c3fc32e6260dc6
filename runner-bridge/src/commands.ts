import type { CommandPlan } from "./adapters/types.ts";
import type { CommandFile } from "./command-file.ts";
import type { CommandFrame } from "./frames.ts";
import type { Logger } from "./logger.ts";
import { pollUntil } from "./poll.ts";
import { groupAlive, signalGroup, terminateGroup } from "./proctree.ts";
import { type RunPaths, readPid } from "./rundir.ts";

export interface CommandHost {
  paths: RunPaths;
  /** The agent's stdin, shared with the adapter's reactions: one file, one lock. */
  inbox: CommandFile;
  /** Commands applied as signals. */
  control: CommandFile;
  log: Logger;
  graceMs: number;
  /** Test-only fault injection: "crash-after-inbox-write". */
  fault?: string;
  /** How the adapter, having read the journal so far, would apply an input, interrupt or approval. */
  plan(cmd: CommandFrame): CommandPlan;
  /** True once the bridge must not write anything more (fenced, or ending). */
  halted(): boolean;
  /** True once the agent's exit sentinel has been read. */
  agentExited(): boolean;
  ack(cmd: CommandFrame, state: "applied" | "rejected"): void;
}

/**
 * Applies commands at most once. Inbox commands (input, approval, protocol interrupts) are
 * appended to the inbox only if their commandId is not there yet, then acked `applied` — so a
 * command the edge re-sends as `unknown` after a crash is acked without being written again.
 * Signal commands (ndjson interrupt, cancel) are recorded in the control file before the signal.
 */
export class CommandHandler {
  private readonly host: CommandHost;
  private readonly deferred = new Map<string, CommandFrame>();
  private cancelling: Promise<void> | null = null;
  /** A cancel was applied (by this bridge or a predecessor): the run ends `cancelled`. */
  cancelRequested: boolean;

  constructor(host: CommandHost) {
    this.host = host;
    this.cancelRequested = host.control.read().some((e) => e.kind === "cancel");
  }

  /** Resolves once a cancel in progress has emptied the agent's process group. */
  async cancelled(): Promise<void> {
    if (this.cancelling) await this.cancelling;
  }

  /** Commands the adapter could not apply yet (e.g. an approval whose request line is unread). */
  takeDeferred(): CommandFrame[] {
    const pending = [...this.deferred.values()];
    this.deferred.clear();
    return pending;
  }

  async handle(cmd: CommandFrame): Promise<void> {
    const host = this.host;
    if (host.halted()) return;
    if (cmd.kind === "cancel") return this.cancel(cmd);
    const plan = host.plan(cmd);
    switch (plan.kind) {
      case "defer":
        this.deferred.set(cmd.commandId, cmd);
        return;
      case "reject":
        host.log.warn(`rejecting ${cmd.kind} command ${cmd.commandId}: ${plan.reason}`);
        host.ack(cmd, "rejected");
        return;
      case "inbox": {
        if (host.agentExited() && !host.inbox.has(cmd.commandId)) {
          host.ack(cmd, "rejected"); // the agent is gone; nobody would read it
          return;
        }
        const append = await host.inbox.appendOnce(plan.envelopes, () => host.halted());
        if (append === "abandoned" || host.halted()) return;
        if (append === "written" && host.fault === "crash-after-inbox-write") process.kill(process.pid, "SIGKILL");
        host.log.info(
          `${append === "written" ? "delivered" : "already delivered"} ${cmd.kind} command ${cmd.commandId}`,
        );
        host.ack(cmd, "applied");
        return;
      }
      case "signal": {
        const append = await host.control.appendOnce([{ commandId: cmd.commandId, kind: cmd.kind }], () =>
          host.halted(),
        );
        if (append === "abandoned" || host.halted()) return;
        if (append === "written") {
          const pgid = await this.agentGroup();
          if (pgid !== null) signalGroup(pgid, plan.signal);
        }
        host.ack(cmd, "applied");
        return;
      }
    }
  }

  /** SIGTERM to the agent's process group now, SIGKILL after the grace period. */
  private async cancel(cmd: CommandFrame): Promise<void> {
    const host = this.host;
    const append = await host.control.appendOnce([{ commandId: cmd.commandId, kind: "cancel" }], () => host.halted());
    if (append === "abandoned" || host.halted()) return;
    this.cancelRequested = true;
    const pgid = await this.agentGroup();
    if (pgid !== null && groupAlive(pgid) && !this.cancelling) {
      signalGroup(pgid, "SIGTERM");
      host.log.info(`cancel ${cmd.commandId}: SIGTERM sent to process group ${pgid}`);
      this.cancelling = terminateGroup(pgid, host.graceMs, true).catch((err: Error) => {
        host.log.warn(err.message);
      });
    }
    host.ack(cmd, "applied");
  }

  /** The agent's process group id (its pid), waiting briefly for the supervisor to record it. */
  private agentGroup(): Promise<number | null> {
    return pollUntil(() => readPid(this.host.paths.agentPid) ?? this.host.halted(), 5000).then((pid) =>
      typeof pid === "number" ? pid : null,
    );
  }
}
