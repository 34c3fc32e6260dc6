import { mintRunTokens } from "../auth/mint.ts";
import type { Env } from "../env.ts";
import { runStub, tenantPoolsStub } from "../objects/stubs.ts";
import { isTerminal, type PoolEdgeFrame, resolveTimeouts, type Result, type RunStatus } from "../protocol/index.ts";
import { type Assignment, chooseAssignments } from "./assign.ts";
import { DispatchStore, type QueuedRun } from "./dispatch-store.ts";
import { PoolHosts, sendFrame } from "./hosts.ts";
import type { Revocation } from "./notices.ts";

/** What a committed step sends once its transaction is done. */
export interface Outgoing {
  frames: Array<{ ws: WebSocket; frame: PoolEdgeFrame }>;
  revocations: Revocation[];
  assignments: Assignment[];
}

/** How long a lapsed lease waits before its run is checked again when the run's object did not answer. */
const RECHECK_MS = 5_000;

/**
 * The dispatcher's working core: every change runs in one storage transaction that ends by
 * assigning what can be assigned (assign.ts), and only once it has committed are the frames sent
 * and the runner tokens minted. So a crash loses no decision: an assignment that was committed but
 * never sent simply lapses and is made again.
 */
export class DispatchCore {
  readonly hosts: PoolHosts;
  private readonly ctx: DurableObjectState;
  private readonly env: Env;

  constructor(ctx: DurableObjectState, env: Env) {
    this.ctx = ctx;
    this.env = env;
    this.hosts = new PoolHosts(ctx);
  }

  /**
   * Whether the socket's pool key is still live: the worker checked it before the upgrade, and a
   * revocation in between would otherwise leave this socket open (revocation closes open ones).
   */
  async keyLive(keyId: string): Promise<boolean> {
    const tenant = this.store().settings()?.tenant;
    return tenant !== undefined && (await tenantPoolsStub(this.env, tenant).keyLive(keyId));
  }

  store(): DispatchStore {
    return new DispatchStore(this.ctx.storage.sql);
  }

  async transact<T>(step: (store: DispatchStore, out: Outgoing, now: number) => T): Promise<T> {
    const out: Outgoing = { frames: [], revocations: [], assignments: [] };
    const now = Date.now();
    this.hosts.closeSilent(now);
    const value = this.ctx.storage.transactionSync(() => {
      const store = this.store();
      const result = step(store, out, now);
      out.assignments.push(...this.assign(store, now));
      return result;
    });
    await this.send(out);
    await this.scheduleAlarm();
    return value;
  }

  private assign(store: DispatchStore, now: number): Assignment[] {
    const settings = store.settings();
    if (!settings) return [];
    const hosts = this.hosts.connected();
    if (hosts.length === 0) return [];
    const chosen = chooseAssignments(store.queued(), store.active(), hosts, settings, now, () => crypto.randomUUID());
    for (const { run } of chosen) store.save(run);
    return chosen;
  }

  private async send(out: Outgoing): Promise<void> {
    for (const { ws, frame } of out.frames) sendFrame(ws, frame);
    for (const revocation of out.revocations) {
      const ws = this.hosts.socketOf(revocation.hostId);
      if (ws) sendFrame(ws, { type: "revoke", ...withoutHost(revocation) });
    }
    const settings = this.store().settings();
    if (!settings) return;
    for (const { run, host } of out.assignments) {
      const runnerToken = await this.mintRunnerToken(settings.tenant, run);
      // Not minted (the run's object is unreachable, or the tenant lost its keys): the lease lapses.
      if (runnerToken === null) continue;
      sendFrame(host.ws, {
        type: "assign",
        assignmentId: run.assignmentId as string,
        runId: run.runId,
        profile: run.profile,
        start: run.start,
        generation: run.generation,
        runnerToken,
        ...(run.prompt === null ? {} : { prompt: run.prompt }),
        leaseMs: settings.assignMs,
      });
    }
  }

  /** A fresh runner token for the assignment, recorded by the run's object so it can be revoked. */
  private async mintRunnerToken(tenant: string, run: QueuedRun): Promise<string | null> {
    const stub = runStub(this.env, tenant, run.runId);
    try {
      const minted = await mintRunTokens(this.env, { tenant, runId: run.runId, stub, timeouts: resolveTimeouts() }, [
        { role: "runner", ttlMs: run.tokenTtlMs },
      ]);
      return minted.ok ? (minted.value[0]?.token ?? null) : null;
    } catch (error) {
      console.error("minting a pool runner token failed", error);
      return null;
    }
  }

  async scheduleAlarm(): Promise<void> {
    const next = this.store().nextDue();
    if (next === null) await this.ctx.storage.deleteAlarm();
    else if ((await this.ctx.storage.getAlarm()) !== next) await this.ctx.storage.setAlarm(next);
  }

  /**
   * The alarm: leases that lapsed are taken back and assigned again — after asking each run's
   * object whether it was claimed after all (its `claimed` notification may still be on its way),
   * so a run is never dispatched a second time while a bridge holds it.
   */
  async alarm(): Promise<void> {
    const now = Date.now();
    const settings = this.store().settings();
    if (!settings) return;
    const lapsed = this.store().lapsed(now);
    const statuses = await Promise.all(lapsed.map((run) => this.runStatus(settings.tenant, run.runId)));
    await this.transact((store, out, at) => {
      lapsed.forEach((before, index) => {
        const run = store.find(before.runId);
        if (run?.state !== "assigned" || run.assignmentId !== before.assignmentId) return;
        store.save(afterLapse(run, statuses[index] ?? null, at, out.revocations));
      });
      store.pruneFinished(at);
    });
  }

  /** The run's status, `finished` when it is gone, null when its object did not answer. */
  private async runStatus(tenant: string, runId: string): Promise<RunStatus | "finished" | null> {
    let answer: Result<{ status: RunStatus }>;
    try {
      answer = await runStub(this.env, tenant, runId).runnerStatus();
    } catch {
      return null;
    }
    if (!answer.ok) return answer.code === "not_found" || answer.code === "gone" ? "finished" : null;
    return isTerminal(answer.value.status) ? "finished" : answer.value.status;
  }
}

function withoutHost(revocation: Revocation): { assignmentId: string; runId: string; reason: string } {
  return { assignmentId: revocation.assignmentId, runId: revocation.runId, reason: revocation.reason };
}

/** A lapsed assignment, given what its run's object said: claimed after all, ended, or taken back. */
function afterLapse(
  run: QueuedRun,
  status: RunStatus | "finished" | null,
  now: number,
  revocations: Revocation[],
): QueuedRun {
  if (status === null) return { ...run, leaseDue: now + RECHECK_MS, updatedAt: now };
  if (status === "running" || status === "waiting" || status === "stalled") {
    return { ...run, state: "running", leaseDue: null, updatedAt: now };
  }
  const reason = status === "finished" ? "the run ended" : "the assignment was not claimed within its lease";
  if (run.hostId !== null && run.assignmentId !== null) {
    revocations.push({ hostId: run.hostId, assignmentId: run.assignmentId, runId: run.runId, reason });
  }
  return {
    ...run,
    state: status === "finished" ? "finished" : "queued",
    lastHost: run.hostId ?? run.lastHost,
    hostId: null,
    assignmentId: null,
    leaseDue: null,
    updatedAt: now,
  };
}
