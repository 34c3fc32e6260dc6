import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import { POOL_CLOSE_REVOKED, PoolEdgeFrame, type PoolHostFrame } from "../../../src/protocol/pool.ts";
import { backoffDelay } from "../connection.ts";
import type { Logger } from "../logger.ts";
import { sleep } from "../poll.ts";
import type { PoolArgs } from "./args.ts";
import { type AssignFrame, Assignment } from "./assignment.ts";
import type { ServedProfile } from "./profiles.ts";
import { connectPoolSocket, keyRefusal, type PoolSocket } from "./socket.ts";

/** No `welcome` this long after the socket opened: the attempt is dropped and made again. */
const WELCOME_MS = 15_000;

type Released = Extract<PoolHostFrame, { type: "released" }>;

/**
 * A pool host: one outbound socket to its queue's dispatcher, kept open with backoff, and the
 * assignments it runs. A reconnect names the assignments still running (`hello.running`), so the
 * edge leaves them here; a bridge that exits while the socket is down is released after `welcome`.
 */
export class PoolHost {
  /** Stable for the life of this process, so the edge recognises a reconnect as the same host. */
  readonly hostId = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly assignments = new Map<string, Assignment>();
  private readonly unsentReleases: Released[] = [];
  private socket: PoolSocket | null = null;
  private welcomed = false;
  private stopped = false;
  private wake: (() => void) | null = null;
  private revoked = false;

  private readonly args: PoolArgs;
  private readonly profiles: Map<string, ServedProfile>;
  private readonly log: Logger;

  constructor(args: PoolArgs, profiles: Map<string, ServedProfile>, log: Logger) {
    this.args = args;
    this.profiles = profiles;
    this.log = log;
  }

  /** Keeps the socket up until `stop`; resolves with a reason when the edge refuses the key. */
  async run(): Promise<string | null> {
    let attempt = 0;
    while (!this.stopped) {
      const welcomed = await this.attempt();
      if (this.stopped) break;
      if (this.revoked) return "the edge revoked the pool key (its sockets were closed)";
      attempt = welcomed ? 1 : attempt + 1;
      if (!welcomed) {
        const refusal = await keyRefusal(this.args.edge, this.args.queue, this.args.key);
        if (refusal) return refusal;
      }
      const delay = backoffDelay(
        attempt,
        this.args.reconnectMinMs,
        Math.max(this.args.reconnectMinMs, this.args.reconnectMaxMs),
      );
      this.log.info(`pool socket closed; reconnecting in ${delay} ms (${this.runningCount()} running)`);
      await Promise.race([sleep(delay), new Promise<void>((resolve) => (this.wake = resolve))]);
    }
    return null;
  }

  /** Closes the socket and stops every bridge and agent this host started. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.socket?.close();
    this.wake?.();
    await Promise.all([...this.assignments.values()].map((a) => a.stop()));
  }

  private runningCount(): number {
    return [...this.assignments.values()].filter((a) => a.running).length;
  }

  /** One connection, until it closes; true when the edge welcomed this host on it. */
  private attempt(): Promise<boolean> {
    return new Promise((resolve) => {
      let welcomeTimer: NodeJS.Timeout | undefined;
      let heartbeat: NodeJS.Timeout | undefined;
      let welcomed = false;
      const socket = connectPoolSocket(this.args.edge, this.args.queue, this.args.key, {
        onOpen: () => {
          this.send(socket, this.hello());
          welcomeTimer = setTimeout(() => {
            this.log.warn(`no welcome within ${WELCOME_MS} ms; dropping the connection`);
            socket.close();
          }, WELCOME_MS);
        },
        onMessage: (text) => {
          const frame = parseFrame(text);
          if (!frame) return this.log.warn(`ignoring a frame from the edge: ${text.slice(0, 200)}`);
          if (frame.type === "welcome") {
            clearTimeout(welcomeTimer);
            welcomed = true;
            this.welcomed = true;
            this.log.info(`connected to queue ${frame.queue} as ${frame.hostId} (${this.args.slots} slots)`);
            heartbeat = setInterval(
              () => this.send(socket, { type: "heartbeat" }),
              Math.max(50, frame.heartbeatMs / 2),
            );
            for (const released of this.unsentReleases.splice(0)) this.send(socket, released);
          } else this.onFrame(socket, frame);
        },
        onClose: (code, reason) => {
          clearTimeout(welcomeTimer);
          clearInterval(heartbeat);
          if (code === POOL_CLOSE_REVOKED) this.revoked = true;
          if (this.socket === socket) {
            this.socket = null;
            this.welcomed = false;
          }
          if (welcomed || code !== 1006) this.log.info(`pool socket closed (${code}${reason ? ` ${reason}` : ""})`);
          resolve(welcomed);
        },
      });
      this.socket = socket;
    });
  }

  private hello(): PoolHostFrame {
    return {
      type: "hello",
      hostId: this.hostId,
      slots: this.args.slots,
      profiles: [...this.profiles.keys()],
      labels: this.args.labels,
      running: [...this.assignments.values()]
        .filter((a) => a.running)
        .map((a) => ({ assignmentId: a.id, runId: a.runId })),
    };
  }

  private send(socket: PoolSocket, frame: PoolHostFrame): void {
    socket.send(JSON.stringify(frame));
  }

  private onFrame(socket: PoolSocket, frame: PoolEdgeFrame): void {
    if (frame.type === "assign") this.onAssign(socket, frame);
    else if (frame.type === "revoke") void this.onRevoke(frame);
    else if (frame.type === "error") this.log.warn(`edge error ${frame.code}: ${frame.message}`);
  }

  private onAssign(socket: PoolSocket, frame: AssignFrame): void {
    this.log.redact([frame.runnerToken]);
    const known = this.assignments.get(frame.assignmentId);
    if (known) {
      // The edge asked again (its answer was lost): the same answer.
      if (known.running) this.send(socket, { type: "accepted", assignmentId: frame.assignmentId });
      return;
    }
    const refusal = this.refusalOf(frame);
    if (refusal) {
      this.log.info(`declined ${frame.assignmentId} (run ${frame.runId}): ${refusal}`);
      this.send(socket, { type: "declined", assignmentId: frame.assignmentId, reason: refusal });
      return;
    }
    if (process.env.RUNNER_POOL_FAULT === "die-after-accept") {
      // Tests: a host that takes the assignment and is lost before any bridge could claim.
      this.send(socket, { type: "accepted", assignmentId: frame.assignmentId });
      this.log.warn(
        `fault die-after-accept: accepted ${frame.assignmentId} (run ${frame.runId}); dying before any bridge starts`,
      );
      setTimeout(() => process.kill(process.pid, "SIGKILL"), 100);
      return;
    }
    const startWhen = /^start-when:(.+)$/.exec(process.env.RUNNER_POOL_FAULT ?? "")?.[1];
    if (startWhen !== undefined) {
      // Tests: a host slow to start its bridge — it accepts, then starts it only once the file
      // exists, whatever the edge said meanwhile (a revoke finds nothing running yet).
      this.send(socket, { type: "accepted", assignmentId: frame.assignmentId });
      this.log.warn(
        `fault start-when: accepted ${frame.assignmentId} (run ${frame.runId}); starting once ${startWhen} exists`,
      );
      void waitForFile(startWhen).then(() => this.start(socket, frame, false));
      return;
    }
    this.start(socket, frame, true);
  }

  /** Starts the assignment's bridge; `accept`: answer `accepted` once it runs. */
  private start(socket: PoolSocket, frame: AssignFrame, accept: boolean): void {
    const served = this.profiles.get(frame.profile) as ServedProfile;
    let assignment: Assignment;
    try {
      assignment = new Assignment(frame, served, {
        edge: this.args.edge,
        root: this.args.dir,
        graceMs: this.args.graceMs,
        onLine: (line) => {
          if (!this.args.quiet || /warning|error/i.test(line))
            process.stderr.write(`[${frame.runId}] ${this.log.scrub(line)}\n`);
        },
      });
    } catch (err) {
      const reason = `cannot start the bridge: ${(err as Error).message}`;
      this.log.warn(`${frame.assignmentId}: ${reason}`);
      this.send(socket, { type: "declined", assignmentId: frame.assignmentId, reason });
      return;
    }
    this.assignments.set(frame.assignmentId, assignment);
    if (accept) this.send(socket, { type: "accepted", assignmentId: frame.assignmentId });
    this.log.info(
      `accepted ${frame.assignmentId}: ${frame.start} run ${frame.runId} generation ${frame.generation} with ${frame.profile} in ${assignment.dir}`,
    );
    void assignment.exited.then((exitCode) => this.onExit(assignment, exitCode));
  }

  private refusalOf(frame: AssignFrame): string | null {
    if (this.stopped) return "this host is stopping";
    if (!this.profiles.has(frame.profile)) return `profile ${frame.profile} is not served here`;
    const running = [...this.assignments.values()].filter((a) => a.running);
    if (running.length >= this.args.slots) return `no free slot (${this.args.slots} taken)`;
    const same = running.find((a) => a.runId === frame.runId);
    if (same) return `run ${frame.runId} already runs here (assignment ${same.id})`;
    return null;
  }

  private async onRevoke(frame: Extract<PoolEdgeFrame, { type: "revoke" }>): Promise<void> {
    const assignment = this.assignments.get(frame.assignmentId);
    if (!assignment?.running) return;
    if (assignment.claimed) {
      // Its claim is the edge's to end (the claim epoch fences it); stopping it here would only lose the run.
      this.log.info(`revoke of ${frame.assignmentId} ignored: its bridge holds run ${frame.runId} (${frame.reason})`);
      return;
    }
    this.log.info(`revoked ${frame.assignmentId} (run ${frame.runId}): ${frame.reason}; stopping its bridge`);
    await assignment.stop();
  }

  private onExit(assignment: Assignment, exitCode: number | null): void {
    this.assignments.delete(assignment.id);
    const kept = exitCode === 0 ? "" : `; its files stay in ${assignment.dir}`;
    this.log.info(`run ${assignment.runId}: bridge exited ${exitCode ?? "by a signal"}; slot free${kept}`);
    if (exitCode === 0) assignment.removeFiles();
    const released: Released = { type: "released", assignmentId: assignment.id, runId: assignment.runId, exitCode };
    if (this.socket && this.welcomed) this.send(this.socket, released);
    else this.unsentReleases.push(released);
  }
}

function parseFrame(text: string): PoolEdgeFrame | null {
  try {
    const parsed = PoolEdgeFrame.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

async function waitForFile(file: string): Promise<void> {
  while (!fs.existsSync(file)) await sleep(50);
}
