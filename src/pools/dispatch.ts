import { type Minted, mintRunTokens } from "../auth/mint.ts";
import type { Env } from "../env.ts";
import { armWithCommit, keepAlarmAt } from "../objects/alarm-schedule.ts";
import { runStub, tenantPoolsStub } from "../objects/stubs.ts";
import { type PoolEdgeFrame, resolveTimeouts, type Result } from "../protocol/index.ts";
import type { TakeBack } from "../run/pool-run.ts";
import { type Assignment, chooseAssignments } from "./assign.ts";
import { DispatchStore, type QueuedRun } from "./dispatch-store.ts";
import { PoolHosts, sendFrame } from "./hosts.ts";
import type { Revocation } from "./notices.ts";

/** What a committed step sends once its transaction is done. */
export interface Outgoing {
  frames: Array<{ ws: WebSocket; frame: PoolEdgeFrame }>;
  revocations: Revocation[];
  assignments: Assignment[];
  /** Runner tokens of assignments given back (declined): revoked before anything new is minted. */
  tokensToRevoke: Array<{ runId: string; tokenId: string }>;
}

/** How long a lapsed lease waits before its run is checked again when the run's object did not answer. */
const RECHECK_MS = 5_000;

/**
 * The dispatcher's working core: every change runs in one storage transaction that ends by
 * assigning what can be assigned (assign.ts); the alarm is armed with that commit, and only then
 * are the frames sent and the runner tokens minted. So a crash loses no decision: an assignment
 * that was committed but never sent simply lapses and is made again.
 */
export class DispatchCore {
  readonly hosts: PoolHosts;
  private readonly ctx: DurableObjectState;
  private readonly env: Env;
  /** The alarm as this instance last armed it; undefined when unknown (just woken, or it rang). */
  private armed: number | null | undefined;

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

  /**
   * On every wake: arms the alarm from the stored deadlines, so a lease committed by an instance
   * that died before its alarm was written is still taken back.
   */
  async wake(): Promise<void> {
    const next = this.store().nextDue();
    await keepAlarmAt(this.ctx.storage, next);
    this.armed = next;
  }

  async transact<T>(step: (store: DispatchStore, out: Outgoing, now: number) => T): Promise<T> {
    const out: Outgoing = { frames: [], revocations: [], assignments: [], tokensToRevoke: [] };
    const now = Date.now();
    this.hosts.closeSilent(now);
    const value = this.ctx.storage.transactionSync(() => {
      const store = this.store();
      const result = step(store, out, now);
      out.assignments.push(...this.assign(store, now));
      return result;
    });
    // No await between the commit and arming: the alarm is written with the commit's rows.
    const arming = this.arm();
    await this.send(out);
    await arming;
    return value;
  }

  private arm(): Promise<void> {
    const next = this.store().nextDue();
    if (next === this.armed) return Promise.resolve();
    this.armed = next;
    return armWithCommit(this.ctx.storage, next);
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
    for (const { runId, tokenId } of out.tokensToRevoke) await this.revokeToken(settings.tenant, runId, tokenId);
    for (const { run, host } of out.assignments) {
      const minted = await this.mintRunnerToken(settings.tenant, run);
      // Not minted (the run's object is unreachable, or the tenant lost its keys): the lease lapses.
      if (minted === null) continue;
      // Taken back while the token was minted: it was never sent, so no host holds it.
      if (!this.recordToken(run, minted.tokenId)) continue;
      sendFrame(host.ws, {
        type: "assign",
        assignmentId: run.assignmentId as string,
        runId: run.runId,
        profile: run.profile,
        start: run.start,
        generation: run.generation,
        runnerToken: minted.token,
        ...(run.prompt === null ? {} : { prompt: run.prompt }),
        leaseMs: settings.assignMs,
      });
    }
  }

  /** A fresh runner token for the assignment, recorded by the run's object so it can be revoked. */
  private async mintRunnerToken(tenant: string, run: QueuedRun): Promise<Minted | null> {
    const stub = runStub(this.env, tenant, run.runId);
    try {
      const minted = await mintRunTokens(this.env, { tenant, runId: run.runId, stub, timeouts: resolveTimeouts() }, [
        { role: "runner", ttlMs: run.tokenTtlMs },
      ]);
      return minted.ok ? (minted.value[0] ?? null) : null;
    } catch (error) {
      console.error("minting a pool runner token failed", error);
      return null;
    }
  }

  /** Stores the assignment's token id, before the token is sent; false when it is no longer assigned. */
  private recordToken(run: QueuedRun, tokenId: string): boolean {
    return this.ctx.storage.transactionSync(() => {
      const store = this.store();
      const current = store.find(run.runId);
      if (current?.state !== "assigned" || current.assignmentId !== run.assignmentId) return false;
      store.save({ ...current, tokenId });
      return true;
    });
  }

  private async revokeToken(tenant: string, runId: string, tokenId: string): Promise<void> {
    try {
      await runStub(this.env, tenant, runId).revokeToken(tokenId);
    } catch (error) {
      // Its lease is gone all the same; the token dies with its expiry, and the claim epoch still fences.
      console.error("revoking a given-back runner token failed", error);
    }
  }

  /**
   * The alarm: leases that lapsed are taken back and assigned again. Each run's object decides
   * first, in one transaction (takeBackAssignment): claimed after all (its `claimed` notification
   * may still be on its way) keeps its bridge; otherwise the assignment's runner token is revoked
   * there, so the host it went to can never claim once the run is offered elsewhere.
   */
  async alarm(): Promise<void> {
    // The alarm that rang is spent: whatever the commit below finds due is armed again.
    this.armed = undefined;
    const now = Date.now();
    const settings = this.store().settings();
    if (!settings) return;
    const lapsed = this.store().lapsed(now);
    const answers = await Promise.all(lapsed.map((run) => this.takeBack(settings.tenant, run)));
    await this.transact((store, out, at) => {
      lapsed.forEach((before, index) => {
        const run = store.find(before.runId);
        // Changed meanwhile (a token recorded since, say): it is looked at again when next due.
        if (run?.state !== "assigned" || run.assignmentId !== before.assignmentId) return;
        if (run.tokenId !== before.tokenId) return;
        store.save(afterLapse(run, answers[index] ?? null, at, out.revocations));
      });
      store.pruneFinished(at);
    });
  }

  /** The run's object's decision on a lapsed assignment; `finished` when the run is gone, null when it did not answer. */
  private async takeBack(tenant: string, run: QueuedRun): Promise<TakeBack | null> {
    let answer: Result<TakeBack>;
    try {
      answer = await runStub(this.env, tenant, run.runId).takeBackAssignment(run.tokenId);
    } catch {
      return null;
    }
    if (!answer.ok) return answer.code === "not_found" || answer.code === "gone" ? "finished" : null;
    return answer.value;
  }
}

function withoutHost(revocation: Revocation): { assignmentId: string; runId: string; reason: string } {
  return { assignmentId: revocation.assignmentId, runId: revocation.runId, reason: revocation.reason };
}

/** A lapsed assignment, given what its run's object said: claimed after all, ended, or taken back. */
function afterLapse(run: QueuedRun, answer: TakeBack | null, now: number, revocations: Revocation[]): QueuedRun {
  if (answer === null) return { ...run, leaseDue: now + RECHECK_MS, updatedAt: now };
  if (answer === "claimed") return { ...run, state: "running", leaseDue: null, updatedAt: now };
  const reason = answer === "finished" ? "the run ended" : "the assignment was not claimed within its lease";
  if (run.hostId !== null && run.assignmentId !== null) {
    revocations.push({ hostId: run.hostId, assignmentId: run.assignmentId, runId: run.runId, reason });
  }
  return {
    ...run,
    state: answer === "finished" ? "finished" : "queued",
    lastHost: run.hostId ?? run.lastHost,
    hostId: null,
    assignmentId: null,
    tokenId: null,
    leaseDue: null,
    updatedAt: now,
  };
}
