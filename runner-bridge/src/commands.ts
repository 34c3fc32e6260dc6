import type { Adapter } from "./adapters/types.ts";
import type { CommandFile } from "./command-file.ts";
import type { CommandFrame } from "./frames.ts";
import type { Logger } from "./log.ts";
import { groupAlive, signalGroup, terminateGroup } from "./proctree.ts";
import { type RunPaths, readPid } from "./rundir.ts";

export interface CommandHost {
  paths: RunPaths;
  /** The agent's stdin, shared with the adapter's reactions: one file, one lock. */
  inbox: CommandFile;
  /** Commands applied as signals. */
  control: CommandFile;
  adapter: Adapter;
  log: Logger;
  graceMs: number;
  /** Test-only fault injection: "crash-after-inbox-write". */
  fault?: string;
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
 * Signal commands (ndjson interrupt, cancel) are recorded in the control log before the signal.
 */
export class CommandHandler {
  private readonly h: CommandHost;
  private readonly deferred = new Map<string, CommandFrame>();
  private cancelling: Promise<void> | null = null;
  /** A cancel was applied (by this bridge or a predecessor): the run ends `cancelled`. */
  cancelRequested: boolean;

  constructor(host: CommandHost) {
    this.h = host;
    this.cancelRequested = host.control.read().some((e) => e.kind === "cancel");
  }

  /** Resolves once a cancel in progress has emptied the agent's process group. */
  async cancelled(): Promise<void> {
    if (this.cancelling) await this.cancelling;
  }

  /** Commands the adapter could not apply yet (e.g. an approval whose request line is unread). */
  retryDeferred(): void {
    if (this.deferred.size === 0) return;
    const pending = [...this.deferred.values()];
    this.deferred.clear();
    for (const cmd of pending) void this.handle(cmd);
  }

  async handle(cmd: CommandFrame): Promise<void> {
    if (this.h.halted()) return;
    if (cmd.kind === "cancel") {
      await this.cancel(cmd);
      return;
    }
    const plan = this.h.adapter.command(cmd);
    switch (plan.kind) {
      case "defer":
        this.deferred.set(cmd.commandId, cmd);
        return;
      case "reject":
        this.h.log.warn(`rejecting ${cmd.kind} command ${cmd.commandId}: ${plan.reason}`);
        this.h.ack(cmd, "rejected");
        return;
      case "inbox": {
        if (this.h.agentExited() && !this.h.inbox.has(cmd.commandId)) {
          this.h.ack(cmd, "rejected"); // the agent is gone; nobody would read it
          return;
        }
        const append = await this.h.inbox.appendOnce(plan.envelopes, this.h.halted);
        if (append === "abandoned" || this.h.halted()) return;
        const written = append === "written";
        if (written && this.h.fault === "crash-after-inbox-write") process.kill(process.pid, "SIGKILL");
        this.h.log.info(`${written ? "delivered" : "already delivered"} ${cmd.kind} command ${cmd.commandId}`);
        this.h.ack(cmd, "applied");
        return;
      }
      case "signal": {
        const append = await this.h.control.appendOnce([{ commandId: cmd.commandId, kind: cmd.kind }], this.h.halted);
        if (append === "abandoned" || this.h.halted()) return;
        if (append === "written") {
          const pgid = await this.agentGroup();
          if (pgid !== null) signalGroup(pgid, plan.signal);
        }
        this.h.ack(cmd, "applied");
        return;
      }
    }
  }

  /** SIGTERM to the agent's process group now, SIGKILL after the grace period. */
  private async cancel(cmd: CommandFrame): Promise<void> {
    const append = await this.h.control.appendOnce([{ commandId: cmd.commandId, kind: "cancel" }], this.h.halted);
    if (append === "abandoned" || this.h.halted()) return;
    this.cancelRequested = true;
    const pgid = await this.agentGroup();
    if (pgid !== null && groupAlive(pgid) && !this.cancelling) {
      signalGroup(pgid, "SIGTERM");
      this.h.log.info(`cancel ${cmd.commandId}: SIGTERM sent to process group ${pgid}`);
      this.cancelling = terminateGroup(pgid, this.h.graceMs, true).catch((err: Error) => {
        this.h.log.warn(err.message);
      });
    }
    this.h.ack(cmd, "applied");
  }

  /** The agent's process group id (its pid), waiting briefly for the supervisor to record it. */
  private async agentGroup(): Promise<number | null> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const pid = readPid(this.h.paths.agentPid);
      if (pid !== null || Date.now() > deadline || this.h.halted()) return pid;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}
