import {
  fail,
  POOL_CLOSE_REPLACED,
  POOL_CLOSE_REVOKED,
  type PoolEdgeFrame,
  type PoolHostFrame,
  PoolHostFrame as HostFrame,
} from "../protocol/index.ts";
import { parseFrame } from "../run/sockets/socket-messages.ts";
import type { DispatchCore } from "./dispatch.ts";
import type { DispatchStore, QueuedRun } from "./dispatch-store.ts";
import { closeHost, HOST_HEARTBEAT_MS, sendFrame } from "./hosts.ts";

type Hello = Extract<PoolHostFrame, { type: "hello" }>;

const refuse = (ws: WebSocket, code: "invalid_frame" | "stale", message: string) =>
  sendFrame(ws, { type: "error", code, message });

/**
 * One message from a pool host. Every refusal is an error frame (codes from errors.ts); nothing a
 * refused frame carried changes the queue.
 */
export async function handleHostMessage(core: DispatchCore, ws: WebSocket, message: string | ArrayBuffer) {
  const parsed = parseFrame(message, HostFrame);
  if (!parsed.ok) return sendFrame(ws, { type: "error", code: parsed.code, message: parsed.message });
  const frame = parsed.value;
  const attachment = core.hosts.attachment(ws);
  if (!attachment) return;
  core.hosts.touch(ws, Date.now());
  if (frame.type === "hello") {
    if (attachment.hello) return refuse(ws, "invalid_frame", "hello was already sent on this socket");
    return hello(core, ws, frame, attachment.keyId);
  }
  const hostId = attachment.hello?.hostId;
  if (hostId === undefined) return refuse(ws, "invalid_frame", "send hello before anything else");
  if (frame.type === "heartbeat") return;
  const refusal = await core.transact((store, out, now) => {
    const run = store.byAssignment(frame.assignmentId);
    const held = run !== null && run.hostId === hostId && (run.state === "assigned" || run.state === "running");
    if (frame.type === "released") {
      // A release of an assignment already taken back is expected: nothing to do.
      if (held && run.runId === frame.runId) store.save(released(run, now));
      return null;
    }
    if (!held) return fail("stale", `assignment ${frame.assignmentId} is not held by host ${hostId}`);
    if (frame.type === "declined" && run.state === "assigned") {
      const settings = store.settings();
      // The host gave its token back unused: revoked before the run's next token is minted.
      if (run.tokenId !== null) out.tokensToRevoke.push({ runId: run.runId, tokenId: run.tokenId });
      store.save({
        ...run,
        state: "queued",
        hostId: null,
        lastHost: hostId,
        assignmentId: null,
        tokenId: null,
        leaseDue: null,
        avoidHost: hostId,
        avoidUntil: now + (settings?.assignMs ?? 0),
        updatedAt: now,
      });
    }
    return null;
  });
  if (refusal) refuse(ws, "stale", refusal.message);
}

/**
 * The bridge of an assignment exited. Claimed: the slot is free, the run goes on through its own
 * lease (a bridge that died is recovered by the run, not judged here). Not claimed yet: the lease
 * is made due now, so the alarm checks the run and assigns it again.
 */
function released(run: QueuedRun, now: number): QueuedRun {
  if (run.state === "assigned") return { ...run, leaseDue: now, updatedAt: now };
  return { ...run, hostId: null, lastHost: run.hostId, updatedAt: now };
}

async function hello(core: DispatchCore, ws: WebSocket, frame: Hello, keyId: string): Promise<void> {
  if (!(await core.keyLive(keyId))) return closeHost(ws, POOL_CLOSE_REVOKED, "pool key revoked");
  core.hosts.setHello(ws, frame);
  for (const older of core.hosts.others(frame.hostId, ws)) {
    closeHost(older, POOL_CLOSE_REPLACED, "the host connected again");
  }
  await core.transact((store, out, now) => {
    const settings = store.settings();
    out.frames.push({
      ws,
      frame: {
        type: "welcome",
        hostId: frame.hostId,
        queue: settings?.queue ?? "default",
        heartbeatMs: HOST_HEARTBEAT_MS,
      },
    });
    for (const stale of reattach(store, frame, now)) out.frames.push({ ws, frame: stale });
  });
}

/**
 * A host (re)connecting keeps the runs whose bridges it says are still alive; what it held and no
 * longer runs is let go: a claimed run goes on through its own lease, an unclaimed one is checked
 * and assigned again. A bridge it still runs for an assignment taken from it (its lease lapsed,
 * the run went elsewhere or ended) is answered with a revoke, so the host stops it.
 */
function reattach(store: DispatchStore, frame: Hello, now: number): PoolEdgeFrame[] {
  const alive = new Map(frame.running.map((entry) => [entry.assignmentId, entry.runId]));
  const revokes: PoolEdgeFrame[] = [];
  for (const [assignmentId, runId] of alive) {
    const run = store.byAssignment(assignmentId);
    if (run && run.runId === runId && (run.state === "assigned" || run.state === "running")) {
      store.save({ ...run, hostId: frame.hostId, updatedAt: now });
    } else {
      const reason = "the assignment was taken back: the run is held elsewhere or ended";
      revokes.push({ type: "revoke", assignmentId, runId, reason });
    }
  }
  for (const run of store.active()) {
    if (run.hostId === frame.hostId && !alive.has(run.assignmentId ?? "")) store.save(released(run, now));
  }
  return revokes;
}
