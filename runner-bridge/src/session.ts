import type { RunnerOutcome } from "../../src/protocol/index.ts";
import type { Adapter } from "./adapters/types.ts";
import type { SessionPlaces } from "./checkpoint/files.ts";
import { type Checkpointer, sessionCheckpointer } from "./checkpoint/uploader.ts";
import { CommandFile, type Envelope } from "./command-file.ts";
import { CommandHandler } from "./commands.ts";
import {
  type ClaimedFrame,
  Connection,
  type ConnectionEnd,
  type ConnectionOptions,
  type EdgeFrame,
} from "./connection.ts";
import { EXIT, type ExitCode } from "./exit.ts";
import type { CommandFrame } from "./frames.ts";
import { JournalEvents } from "./journal-events.ts";
import type { Logger } from "./logger.ts";
import { DEFAULT_LINGER_MS, MAX_FRAME_PAYLOAD, Outbox } from "./outbox.ts";
import { pollUntil } from "./poll.ts";
import { secretForms } from "./redact.ts";
import { groupAlive, processAlive, terminateGroup } from "./proctree.ts";
import { type RunPaths, type RunSpec, readPid, readTail, removeRunFiles } from "./rundir.ts";
import type { ExitInfo } from "./sentinel.ts";

export interface SessionOptions extends Omit<ConnectionOptions, "log"> {
  paths: RunPaths;
  spec: RunSpec;
  /** A fresh adapter; reading the journal again from byte 0 starts from a fresh one. */
  makeAdapter: () => Adapter;
  log: Logger;
  /** SIGTERM → SIGKILL grace for the agent's process group. */
  graceMs: number;
  /** Test-only fault injection (RUNNER_BRIDGE_FAULT). */
  fault?: string;
  /** --linger-ms: how long a frame that is not full waits for more events (absent: DEFAULT_LINGER_MS). */
  lingerMs?: number;
  /** Where the agent keeps its session, and how often to look for a new checkpoint of it. */
  checkpoint?: { places: SessionPlaces; intervalMs: number };
}

/**
 * Where the session is in its life:
 * - streaming: following the journal and sending it whenever the connection is claimed;
 * - completing: the agent exited and the edge holds every event; the outcome goes out under each
 *   new claim until the edge answers `completed` (`sentAt` is the epoch it last went out under);
 * - ending: the run is over on the edge; the agent's group is reaped and the run files deleted;
 * - stopped: the exit status is decided.
 */
type SessionState =
  | { kind: "streaming" }
  | { kind: "completing"; outcome: RunnerOutcome | null; sentAt: number | null }
  | { kind: "ending" }
  | { kind: "stopped" };

/** How often the journal is looked at for new lines. */
const PUMP_MS = 25;
/** How long a dead supervisor may go without an exit sentinel before the run is reported failed. */
const SUPERVISOR_GRACE_MS = 2000;

/**
 * One bridge's life on one run: follow the journal, stream it under the current claim, apply
 * commands once, finish the run. Resolves with the CLI's exit status.
 */
export class Session {
  private readonly options: SessionOptions;
  private readonly log: Logger;
  private readonly journal: JournalEvents;
  private readonly outbox = new Outbox();
  private readonly inbox: CommandFile;
  private readonly commands: CommandHandler;
  private readonly connection: Connection;
  private readonly checkpointer: Checkpointer | null;
  /** The generation the current claim serves (events frames name it). */
  private generation = 1;
  private state: SessionState = { kind: "streaming" };
  private supervisorGoneAt: number | null = null;
  private pumpTimer: ReturnType<typeof setInterval> | null = null;
  private resolveExit: (code: ExitCode) => void = () => {};

  constructor(options: SessionOptions) {
    this.options = options;
    this.log = options.log;
    this.journal = new JournalEvents(options.paths.journal, options.spec.nonce, options.makeAdapter, {
      times: options.paths.times,
      redact: secretForms(options.log.secrets()),
    });
    this.inbox = new CommandFile(options.paths.inbox);
    this.commands = new CommandHandler({
      paths: options.paths,
      inbox: this.inbox,
      control: new CommandFile(options.paths.control),
      log: options.log,
      graceMs: options.graceMs,
      ...(options.fault ? { fault: options.fault } : {}),
      plan: (cmd) => this.journal.adapter.command(cmd),
      halted: () => this.halted(),
      agentExited: () => this.journal.exit !== null,
      ack: (cmd, state) => this.ack(cmd, state),
    });
    this.connection = new Connection(options, {
      lastSourceSeq: () => this.journal.linesRead,
      claimed: (frame) => this.onClaimed(frame),
      frame: (frame) => this.onFrame(frame),
      ended: (end) => this.onConnectionEnd(end),
    });
    this.checkpointer = sessionCheckpointer(options, {
      linesRead: () => this.journal.linesRead,
      acked: () => this.outbox.acked,
      claim: () => {
        const epoch = this.connection.epoch;
        return epoch === null ? null : { epoch, generation: this.generation };
      },
    });
  }

  run(): Promise<ExitCode> {
    return new Promise<ExitCode>((resolve) => {
      this.resolveExit = resolve;
      this.pumpTimer = setInterval(() => this.pump(), PUMP_MS);
      this.checkpointer?.start();
      this.connection.start();
    });
  }

  /** No more reading, sending or writing: the run is over, or the exit is decided. */
  private halted(): boolean {
    return this.state.kind === "ending" || this.state.kind === "stopped";
  }

  // ---- ending -------------------------------------------------------------------------------

  private stop(code: ExitCode, reason: string): void {
    if (this.state.kind === "stopped") return;
    this.state = { kind: "stopped" };
    if (this.pumpTimer) clearInterval(this.pumpTimer);
    this.checkpointer?.stop();
    this.connection.close();
    if (code === EXIT.ok) this.log.info(reason);
    else process.stderr.write(`runner-bridge: ${this.log.scrub(reason)}\n`);
    this.resolveExit(code);
  }

  /** Fenced: stop reading and sending at once, touch nothing, leave the agent to the successor. */
  private fenced(detail: string): void {
    this.stop(EXIT.fenced, `fenced: ${detail}; a newer bridge owns run ${this.options.runId}`);
  }

  /** The run is over on the edge: make sure nothing of the agent survives, delete the run files. */
  private async runOver(code: ExitCode, reason: string): Promise<void> {
    if (this.halted()) return;
    this.state = { kind: "ending" };
    if (this.pumpTimer) clearInterval(this.pumpTimer);
    this.checkpointer?.stop();
    this.connection.close();
    const { paths, graceMs } = this.options;
    try {
      await this.commands.cancelled();
      const pgid = readPid(paths.agentPid);
      if (pgid !== null) await terminateGroup(pgid, graceMs);
      const supervisor = readPid(paths.supervisorPid);
      if (supervisor !== null) await pollUntil(() => !processAlive(supervisor), 5000);
      removeRunFiles(paths);
    } catch (err) {
      this.stop(EXIT.failure, `${reason}, but cleaning up failed: ${(err as Error).message}`);
      return;
    }
    this.stop(code, reason);
  }

  private onConnectionEnd(end: ConnectionEnd): void {
    const runId = this.options.runId;
    switch (end.kind) {
      case "fenced":
        this.fenced(end.detail);
        break;
      case "run-over":
        void this.runOver(this.claimedBefore() ? EXIT.ok : EXIT.terminalRun, `run ${runId} ${end.detail}`);
        break;
      case "unknown-run":
        this.stop(EXIT.unknownRun, `run ${runId} is unknown to the edge`);
        break;
      case "gave-up":
        this.stop(EXIT.failure, `gave up: no claimed connection to the edge for ${this.options.giveUpMs} ms`);
        break;
    }
  }

  private claimedBefore(): boolean {
    return this.connection.heldEpoch !== null;
  }

  // ---- frames from the edge -----------------------------------------------------------------

  private onClaimed(frame: ClaimedFrame): void {
    this.generation = frame.generation;
    this.outbox.claimed(frame.ackedSourceSeq);
    this.log.info(
      `claimed run ${this.options.runId} at epoch ${frame.epoch}, generation ${frame.generation} (edge holds ${frame.ackedSourceSeq} events)`,
    );
    for (const cmd of frame.commands) this.dispatch(cmd);
    this.pump();
  }

  private onFrame(frame: EdgeFrame): void {
    if (this.halted()) return;
    const runId = this.options.runId;
    switch (frame.type) {
      case "ack":
        this.outbox.acknowledged(frame.highestSourceSeq);
        this.pump();
        break;
      case "gap":
        this.log.warn(`edge expects sourceSeq ${frame.expected}; resending from there`);
        if (this.outbox.gap(frame.expected) === "reread") this.journal.reread();
        this.pump();
        break;
      case "conflict":
        this.stop(
          EXIT.failure,
          `the edge holds a different event at sourceSeq ${frame.sourceSeq}: journal ${this.options.paths.journal} does not belong to this run`,
        );
        break;
      case "fenced":
        this.fenced(`edge is at epoch ${frame.epoch}`);
        break;
      case "rejected":
        if (frame.reason !== "terminal-run") {
          // Recovering (or not resumable): this agent can never be claimed; a resume or a restart
          // elsewhere serves the run, so nothing of it may linger here.
          const mode = frame.mode ? ` in mode ${frame.mode}` : "";
          void this.runOver(
            EXIT.notResumable,
            `${frame.reason}: the edge refused the claim (run ${runId} is ${frame.status}${mode})`,
          );
        } else if (this.claimedBefore())
          void this.runOver(EXIT.ok, `run ${runId} was ended by the edge (${frame.status})`);
        else void this.runOver(EXIT.terminalRun, `terminal-run: run ${runId} is already ${frame.status}`);
        break;
      case "completed":
        void this.runOver(EXIT.ok, `run ${runId} finished: ${frame.status}`);
        break;
      case "command":
        this.dispatch(frame);
        break;
      case "error":
        if (frame.code === "outcome_conflict") {
          const reason = `terminal-run: the edge already ended run ${runId} differently (${frame.message})`;
          void this.runOver(EXIT.terminalRun, reason);
        } else {
          this.log.warn(`edge error ${frame.code}: ${frame.message}`);
        }
        break;
    }
  }

  // ---- commands ------------------------------------------------------------------------------

  private dispatch(cmd: CommandFrame): void {
    this.commands
      .handle(cmd)
      .catch((err: Error) => this.stop(EXIT.failure, `applying a command failed: ${err.message}`));
  }

  private ack(cmd: CommandFrame, state: "delivered" | "applied" | "rejected"): void {
    const epoch = this.connection.epoch;
    if (epoch === null) return; // the edge re-sends unacked commands on the next claim
    this.connection.send({
      type: "commandAck",
      epoch,
      controllerSeq: cmd.controllerSeq,
      commandId: cmd.commandId,
      state,
    });
  }

  // ---- the pump: journal → outbox → edge → completion -----------------------------------------

  private pump(): void {
    // Nothing is read before the first claim: the edge's ackedSourceSeq says where to start.
    if (this.halted() || this.connection.heldEpoch === null) return;
    try {
      this.readJournal();
      if (this.connection.epoch !== null) for (const cmd of this.commands.takeDeferred()) this.dispatch(cmd);
      this.sendEvents();
      this.checkpointer?.tick();
      this.complete();
    } catch (err) {
      this.stop(EXIT.failure, `bridge failure: ${(err as Error).message}`);
    }
  }

  private readJournal(): void {
    while (this.outbox.room() > 0 && !this.halted()) {
      const read = this.journal.read(this.outbox.room());
      if (read.length === 0) return;
      for (const { event, reactions } of read) {
        for (const envelopes of reactions) this.react(envelopes);
        this.outbox.push(event, Date.now());
        this.checkpointer?.observe(event.type, event.data);
      }
    }
  }

  /** An adapter's reaction goes through the inbox's one lock, in the order the lines were read. */
  private react(envelopes: Envelope[]): void {
    this.inbox
      .appendOnce(envelopes, () => this.halted())
      .catch((err: Error) => this.stop(EXIT.failure, `writing the inbox failed: ${err.message}`));
  }

  private sendEvents(): void {
    const epoch = this.connection.epoch;
    if (epoch === null) return;
    // Once the agent has exited nothing more can share the frame: no reason to hold it.
    if (this.journal.exit === null && this.outbox.lingering(Date.now(), this.options.lingerMs ?? DEFAULT_LINGER_MS))
      return;
    while (this.connection.bufferedAmount() < 4 * MAX_FRAME_PAYLOAD) {
      const events = this.outbox.nextBatch();
      const generation = this.generation;
      if (!events || !this.connection.send({ type: "events", epoch, generation, events })) return;
    }
  }

  /** Once the agent has exited and the edge holds every event, the outcome goes out. */
  private complete(): void {
    const exit = this.journal.exit ?? this.supervisorLost();
    const epoch = this.connection.epoch;
    if (!exit || epoch === null) return;
    const total = this.journal.totalLines ?? this.journal.linesRead;
    if (this.outbox.acked < total) return;
    if (this.state.kind === "streaming") {
      const completing = { kind: "completing" as const, outcome: null, sentAt: null };
      this.state = completing;
      this.decideOutcome(exit).then(
        (outcome) => {
          if (this.state !== completing) return; // fenced or ended meanwhile
          this.state = { ...completing, outcome };
          this.complete();
        },
        (err: Error) => this.stop(EXIT.failure, `deciding the run's outcome failed: ${err.message}`),
      );
      return;
    }
    if (this.state.kind === "completing" && this.state.outcome && this.state.sentAt !== epoch) {
      this.log.info(`agent exited; reporting ${this.state.outcome.status}`);
      if (this.connection.send({ type: "complete", epoch, outcome: this.state.outcome })) this.state.sentAt = epoch;
    }
  }

  /** Reaps stragglers of the agent's group (nothing may outlive its run), then asks the adapter. */
  private async decideOutcome(exit: ExitInfo): Promise<RunnerOutcome> {
    const pgid = readPid(this.options.paths.agentPid);
    try {
      await this.commands.cancelled();
      if (pgid !== null && groupAlive(pgid)) await terminateGroup(pgid, this.options.graceMs);
    } catch (err) {
      this.log.warn((err as Error).message);
    }
    const outcome = this.journal.adapter.outcome(exit, {
      cancelled: this.commands.cancelRequested,
      stderrTail: readTail(this.options.paths.stderr, 4096),
    });
    if (outcome.error) outcome.error = { ...outcome.error, message: this.log.scrub(outcome.error.message) };
    return outcome;
  }

  /** The supervisor died without writing a sentinel (e.g. killed with the whole sandbox). */
  private supervisorLost(): ExitInfo | null {
    const { paths } = this.options;
    const pid = readPid(paths.supervisorPid);
    if (pid === null || processAlive(pid)) {
      this.supervisorGoneAt = null;
      return null;
    }
    this.supervisorGoneAt ??= Date.now();
    if (Date.now() - this.supervisorGoneAt < SUPERVISOR_GRACE_MS) return null;
    const agent = readPid(paths.agentPid);
    if (agent !== null && groupAlive(agent)) return null;
    return { code: null, signal: null, spawnError: "the supervisor died before the agent's exit was recorded" };
  }
}
