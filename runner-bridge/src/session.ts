import { CLOSE_FENCED, CLOSE_REJECTED, type RunnerEvent, type RunnerOutcome } from "../../src/protocol/index.ts";
import type { Adapter } from "./adapters/types.ts";
import { fitEvent, MAX_FRAME_PAYLOAD, nextBatch } from "./batches.ts";
import { backoffDelay, preflight } from "./edge.ts";
import { EXIT, type ExitCode } from "./exit.ts";
import { type CommandFrame, encodeRunnerFrame, parseServerFrame } from "./frames.ts";
import { CommandFile, type Envelope } from "./command-file.ts";
import { JournalReader } from "./journal.ts";
import { CommandHandler } from "./commands.ts";
import type { Logger } from "./log.ts";
import { groupAlive, processAlive, terminateGroup } from "./proctree.ts";
import { type RunPaths, type RunSpec, readPid, readTail, removeRunFiles } from "./rundir.ts";
import type { ExitInfo } from "./sentinel.ts";
import { connectSocket, type Socket } from "./socket.ts";

export interface SessionOptions {
  edge: string;
  runId: string;
  token: string;
  paths: RunPaths;
  spec: RunSpec;
  adapter: Adapter;
  log: Logger;
  runnerId: string;
  /** Give up reconnecting after this long without a claim. */
  giveUpMs: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** SIGTERM → SIGKILL grace for the agent's process group. */
  graceMs: number;
  /** How long a connection may take to be claimed. */
  claimTimeoutMs: number;
  /** Test-only fault injection (RUNNER_BRIDGE_FAULT). */
  fault?: string;
}

/** Most events kept in memory (read from the journal, not yet acknowledged). */
const WINDOW = 2000;

/**
 * One bridge's life on one run: follow the journal, stream it under the current epoch, keep the
 * lease, apply commands once, finish the run. Resolves with the CLI's exit status.
 */
export class Session {
  private readonly o: SessionOptions;
  private reader: JournalReader;
  private readonly inbox: CommandFile;
  private unacked: RunnerEvent[] = [];
  private acked = 0;
  private sentUpTo = 0;
  private epoch = 0;
  private socket: Socket | null = null;
  private claimed = false;
  private everClaimed = false;
  private completing = false;
  private outcome: RunnerOutcome | null = null;
  /** No more reading, sending or writing (fenced, or ending). */
  private halted = false;
  /** The exit status has been decided. */
  private stopped = false;
  private readonly commands: CommandHandler;
  private supervisorGoneAt: number | null = null;
  private pollTimer: ReturnType<typeof setInterval> | null = null;
  private heartbeatTimer: ReturnType<typeof setInterval> | null = null;
  private resolveExit: (code: ExitCode) => void = () => {};
  private pumping = false;

  constructor(options: SessionOptions) {
    this.o = options;
    this.reader = new JournalReader(options.paths.journal, options.spec.nonce);
    this.inbox = new CommandFile(options.paths.inbox);
    this.commands = new CommandHandler({
      paths: options.paths,
      inbox: this.inbox,
      control: new CommandFile(options.paths.control),
      adapter: options.adapter,
      log: options.log,
      graceMs: options.graceMs,
      ...(options.fault ? { fault: options.fault } : {}),
      halted: () => this.halted,
      agentExited: () => this.reader.exit !== null,
      ack: (cmd, state) => this.ack(cmd, state),
    });
  }

  run(): Promise<ExitCode> {
    return new Promise<ExitCode>((resolve) => {
      this.resolveExit = resolve;
      this.pollTimer = setInterval(() => this.pump(), 25);
      void this.connectLoop();
    });
  }

  // ---- ending -------------------------------------------------------------------------------

  private stop(code: ExitCode, reason: string): void {
    if (this.stopped) return;
    this.stopped = true;
    this.halted = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.socket?.close();
    if (code === EXIT.ok) this.o.log.info(reason);
    else process.stderr.write(`runner-bridge: ${this.o.log.scrub(reason)}\n`);
    this.resolveExit(code);
  }

  /** Fenced: stop reading and sending at once, touch nothing, leave the agent to the successor. */
  private fenced(detail: string): void {
    this.stop(EXIT.fenced, `fenced: ${detail}; a newer bridge owns run ${this.o.runId}`);
  }

  /** The run is over on the edge: make sure nothing of the agent survives, delete the journal. */
  private async runOver(code: ExitCode, reason: string): Promise<void> {
    if (this.halted) return;
    this.halted = true; // nothing more is sent
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.pollTimer) clearInterval(this.pollTimer);
    try {
      await this.commands.cancelled();
      const pgid = readPid(this.o.paths.agentPid);
      if (pgid !== null) await terminateGroup(pgid, this.o.graceMs);
      await this.waitSupervisorGone();
      removeRunFiles(this.o.paths);
    } catch (err) {
      this.stop(EXIT.failure, `${reason}, but cleaning up failed: ${(err as Error).message}`);
      return;
    }
    this.stop(code, reason);
  }

  private async waitSupervisorGone(): Promise<void> {
    const pid = readPid(this.o.paths.supervisorPid);
    const deadline = Date.now() + 5000;
    while (pid !== null && processAlive(pid) && Date.now() < deadline) await sleep(25);
  }

  // ---- connection ---------------------------------------------------------------------------

  private async connectLoop(): Promise<void> {
    let attempt = 0;
    let failingSince = Date.now();
    while (!this.halted) {
      if (attempt > 0 && this.everClaimed) {
        // While we were away a successor may have claimed the run: never steal it back. The
        // preflight answers early; `hello.epoch` closes the race between it and the claim.
        const look = await preflight(this.o.edge, this.o.runId, this.o.token, 5000);
        if (this.halted) return;
        if (look.kind === "live" && look.epoch > this.epoch) {
          this.fenced(`epoch ${look.epoch} was claimed while this bridge (epoch ${this.epoch}) was disconnected`);
          return;
        }
        if (look.kind === "terminal") {
          await this.runOver(EXIT.ok, `run ${this.o.runId} ended on the edge (${look.status}) while disconnected`);
          return;
        }
        if (look.kind === "unknown") {
          this.stop(EXIT.unknownRun, `run ${this.o.runId} is unknown to the edge`);
          return;
        }
      }
      const claimedHere = await this.connectOnce();
      if (this.halted) return;
      if (claimedHere) {
        attempt = 0;
        failingSince = Date.now();
      }
      attempt++;
      const waited = Date.now() - failingSince;
      if (waited > this.o.giveUpMs) {
        this.stop(EXIT.failure, `gave up: no claimed connection to the edge for ${this.o.giveUpMs} ms`);
        return;
      }
      const delay = Math.min(
        backoffDelay(attempt, this.o.reconnectMinMs, this.o.reconnectMaxMs),
        this.o.giveUpMs - waited + 1,
      );
      this.o.log.info(`connection lost; reconnecting in ${delay} ms (attempt ${attempt})`);
      await sleep(delay);
    }
  }

  /** One connection; resolves when it closes, with whether it was claimed. */
  private connectOnce(): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      let claimedHere = false;
      const socket = connectSocket(this.o.edge, this.o.runId, this.o.token, {
        onOpen: () => {
          // After a cut, name the epoch we held: the edge fences us if a successor claimed since.
          const held = this.everClaimed ? { epoch: this.epoch } : {};
          this.sendFrame(socket, {
            type: "hello",
            runnerId: this.o.runnerId,
            lastSourceSeq: this.reader.linesReturned,
            ...held,
          });
        },
        onMessage: (text) => {
          if (this.socket !== socket || this.halted) return;
          const wasClaimed = this.claimed;
          this.onFrame(text);
          if (!wasClaimed && this.claimed) claimedHere = true;
        },
        onClose: (code, reason) => {
          clearTimeout(claimTimer);
          if (this.socket === socket) {
            this.socket = null;
            this.claimed = false;
            if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
          }
          if (!this.halted) this.onClose(code, reason);
          resolve(claimedHere);
        },
      });
      this.socket = socket;
      const claimTimer = setTimeout(() => {
        if (!claimedHere) {
          this.o.log.warn(`no claim within ${this.o.claimTimeoutMs} ms; dropping the connection`);
          socket.close();
        }
      }, this.o.claimTimeoutMs);
    });
  }

  private onClose(code: number, reason: string): void {
    if (code === CLOSE_FENCED) this.fenced(`connection closed with ${CLOSE_FENCED}${reason ? ` (${reason})` : ""}`);
    else if (code === CLOSE_REJECTED)
      void this.runOver(this.everClaimed ? EXIT.ok : EXIT.terminalRun, `run ${this.o.runId} was ended by the edge`);
  }

  private sendFrame(socket: Socket | null, frame: Parameters<typeof encodeRunnerFrame>[0]): boolean {
    if (this.halted || !socket || !socket.isOpen()) return false;
    socket.send(encodeRunnerFrame(frame));
    return true;
  }

  // ---- frames from the edge -----------------------------------------------------------------

  private onFrame(text: string): void {
    const parsed = parseServerFrame(text);
    if ("error" in parsed) {
      this.o.log.warn(`ignoring frame from the edge: ${parsed.error}`);
      return;
    }
    const frame = parsed.frame;
    switch (frame.type) {
      case "claimed":
        this.onClaimed(frame.epoch, frame.ackedSourceSeq, frame.heartbeatMs);
        for (const cmd of frame.commands) void this.commands.handle(cmd);
        break;
      case "ack":
        this.onAck(frame.highestSourceSeq);
        break;
      case "gap":
        this.o.log.warn(`edge expects sourceSeq ${frame.expected}; resending from there`);
        this.onGap(frame.expected);
        break;
      case "conflict":
        this.stop(
          EXIT.failure,
          `the edge holds a different event at sourceSeq ${frame.sourceSeq}: journal ${this.o.paths.journal} does not belong to this run`,
        );
        break;
      case "fenced":
        this.fenced(`edge is at epoch ${frame.epoch}`);
        break;
      case "rejected":
        void this.runOver(
          this.everClaimed ? EXIT.ok : EXIT.terminalRun,
          this.everClaimed
            ? `run ${this.o.runId} was ended by the edge (${frame.status})`
            : `terminal-run: run ${this.o.runId} is already ${frame.status}`,
        );
        break;
      case "completed":
        void this.runOver(EXIT.ok, `run ${this.o.runId} finished: ${frame.status}`);
        break;
      case "command":
        void this.commands.handle(frame);
        break;
      case "error":
        if (frame.code === "outcome_conflict") {
          void this.runOver(
            EXIT.terminalRun,
            `terminal-run: the edge already ended run ${this.o.runId} differently (${frame.message})`,
          );
        } else {
          this.o.log.warn(`edge error ${frame.code}: ${frame.message}`);
        }
        break;
    }
  }

  private onClaimed(epoch: number, ackedSourceSeq: number, heartbeatMs: number): void {
    this.epoch = epoch;
    this.claimed = true;
    this.everClaimed = true;
    this.completing = false;
    this.acked = ackedSourceSeq;
    this.sentUpTo = ackedSourceSeq;
    this.dropAcked();
    this.o.log.info(`claimed run ${this.o.runId} at epoch ${epoch} (edge holds ${ackedSourceSeq} events)`);
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    const every = Math.max(50, Math.floor(heartbeatMs / 3));
    this.heartbeatTimer = setInterval(() => {
      if (this.claimed) this.sendFrame(this.socket, { type: "heartbeat", epoch: this.epoch });
    }, every);
    this.pump();
  }

  private onAck(highest: number): void {
    if (highest > this.acked) this.acked = highest;
    this.dropAcked();
    this.pump();
  }

  private onGap(expected: number): void {
    const first = this.unacked[0]?.sourceSeq;
    if (first === undefined || expected < first) {
      // Those events already left memory: re-read the journal from byte 0 (deterministic, so the
      // same lines come back with the same sourceSeqs; the adapter's reactions are idempotent).
      this.reader = new JournalReader(this.o.paths.journal, this.o.spec.nonce);
      this.unacked = [];
    }
    this.acked = Math.min(this.acked, expected - 1);
    this.sentUpTo = Math.min(this.sentUpTo, expected - 1);
    this.pump();
  }

  private dropAcked(): void {
    let i = 0;
    while (i < this.unacked.length && (this.unacked[i]?.sourceSeq ?? 0) <= this.acked) i++;
    if (i > 0) this.unacked.splice(0, i);
  }

  // ---- commands ------------------------------------------------------------------------------

  private ack(cmd: CommandFrame, state: "delivered" | "applied" | "rejected"): void {
    if (!this.claimed) return; // the edge re-sends unacked commands on the next claim
    this.sendFrame(this.socket, {
      type: "commandAck",
      epoch: this.epoch,
      controllerSeq: cmd.controllerSeq,
      commandId: cmd.commandId,
      state,
    });
  }

  // ---- the pump: journal → memory → socket → completion ---------------------------------------

  private pump(): void {
    if (this.halted || !this.everClaimed || this.pumping) return;
    this.pumping = true;
    try {
      this.readJournal();
      if (this.claimed) this.commands.retryDeferred();
      this.sendEvents();
      this.maybeComplete();
    } catch (err) {
      this.stop(EXIT.failure, `bridge failure: ${(err as Error).message}`);
    } finally {
      this.pumping = false;
    }
  }

  private readJournal(): void {
    while (this.unacked.length < WINDOW && !this.halted) {
      const lines = this.reader.read(WINDOW - this.unacked.length);
      if (lines.length === 0) break;
      for (const line of lines) {
        const result = this.o.adapter.onLine(line.text);
        for (const group of result.reactions ?? []) this.react(group);
        if (line.lineNo <= this.acked) continue;
        const event: RunnerEvent = { sourceSeq: line.lineNo, type: result.event.type };
        if (result.event.data !== undefined) event.data = result.event.data;
        this.unacked.push(fitEvent(event, line.text));
      }
    }
  }

  /** An adapter's reaction goes through the inbox's one lock, in the order the lines were read. */
  private react(envelopes: Envelope[]): void {
    this.inbox
      .appendOnce(envelopes, () => this.halted)
      .catch((err: Error) => this.stop(EXIT.failure, `writing the inbox failed: ${err.message}`));
  }

  private sendEvents(): void {
    if (!this.claimed || !this.socket?.isOpen()) return;
    let i = this.unacked.findIndex((e) => e.sourceSeq > this.sentUpTo);
    if (i < 0) return;
    while (i < this.unacked.length && this.socket.bufferedAmount() < 4 * MAX_FRAME_PAYLOAD) {
      const batch = nextBatch(this.unacked, i);
      if (!this.sendFrame(this.socket, { type: "events", epoch: this.epoch, events: batch })) return;
      i += batch.length;
      this.sentUpTo = (batch[batch.length - 1] as RunnerEvent).sourceSeq;
    }
  }

  private maybeComplete(): void {
    let exit = this.reader.exit;
    if (!exit) exit = this.supervisorLost();
    if (!exit || !this.claimed || this.completing) return;
    const total = this.reader.totalLines ?? this.reader.linesReturned;
    if (this.acked < total) return;
    this.completing = true;
    void this.complete(exit);
  }

  /** The supervisor died without writing a sentinel (e.g. killed with the whole sandbox). */
  private supervisorLost(): ExitInfo | null {
    const pid = readPid(this.o.paths.supervisorPid);
    if (pid === null || processAlive(pid)) {
      this.supervisorGoneAt = null;
      return null;
    }
    this.supervisorGoneAt ??= Date.now();
    if (Date.now() - this.supervisorGoneAt < 2000 || this.reader.exit) return null;
    const agent = readPid(this.o.paths.agentPid);
    if (agent !== null && groupAlive(agent)) return null;
    return { code: null, signal: null, spawnError: "the supervisor died before the agent's exit was recorded" };
  }

  private async complete(exit: ExitInfo): Promise<void> {
    // Nothing of the agent may outlive its run: reap stragglers of the group first.
    const pgid = readPid(this.o.paths.agentPid);
    try {
      await this.commands.cancelled();
      if (pgid !== null && groupAlive(pgid)) await terminateGroup(pgid, this.o.graceMs);
    } catch (err) {
      this.o.log.warn((err as Error).message);
    }
    if (this.halted) return;
    if (!this.outcome) {
      const outcome = this.o.adapter.outcome(exit, {
        cancelled: this.commands.cancelRequested,
        stderrTail: readTail(this.o.paths.stderr, 4096),
      });
      if (outcome.error) outcome.error = { ...outcome.error, message: this.o.log.scrub(outcome.error.message) };
      this.outcome = outcome;
    }
    this.o.log.info(`agent exited; reporting ${this.outcome.status}`);
    if (!this.sendFrame(this.socket, { type: "complete", epoch: this.epoch, outcome: this.outcome })) {
      this.completing = false; // retried after the next claim
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
