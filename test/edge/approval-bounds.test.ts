import { describe, expect, it } from "vitest";
import { APPROVAL_SUMMARY_DATA_BYTES } from "../../src/protocol/index.ts";
import { allEvents, call, createRun, getRun, json, KEY_B } from "./helpers.ts";
import { EDGE_LIMITS } from "./limits.ts";
import { agentEvent, claim } from "./sockets.ts";

const asking = (sourceSeq: number, requestId: string, extra: Record<string, unknown> = {}) =>
  agentEvent(sourceSeq, "approval.requested", { requestId, tool: "shell", command: `step ${sourceSeq}`, ...extra });

async function claimedRun() {
  const created = await createRun({ timeouts: { approvalMs: 60_000, heartbeatMs: 600_000 } });
  return { ...created, ...(await claim(created.run.id, created.runnerToken)) };
}

describe("approval bounds", () => {
  it("past APPROVALS_PENDING_MAX a request is denied to the runner at once, and the run goes on", async () => {
    const { run, runner, epoch } = await claimedRun();
    const cap = EDGE_LIMITS.pendingApprovals;
    const events = Array.from({ length: cap + 1 }, (_, i) => asking(i + 1, `req-${i + 1}`));
    runner.send({ type: "events", epoch, events });
    expect(await runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: cap + 1 });
    const refused = `req-${cap + 1}`;
    expect(await runner.next("command", (f) => f.requestId === refused)).toMatchObject({
      kind: "approval",
      decision: "deny",
      reason: "too_many_approvals",
    });
    const waiting = await getRun(run.id);
    expect(waiting.status).toBe("waiting");
    expect(waiting.pendingApprovals.map((a) => a.requestId)).toEqual(
      events.slice(0, cap).map((e) => (e.data as { requestId: string }).requestId),
    );
    const expired = (await allEvents(run.id)).filter((e) => e.type === "approval.expired");
    expect(expired.map((e) => e.data)).toEqual([
      { requestId: refused, decision: "deny", reason: "too_many_approvals" },
    ]);
    // The refused request is settled: deciding it is stale, and asking again opens nothing.
    const decide = await call(`/v1/runs/${run.id}/approvals/${refused}`, {
      method: "POST",
      json: { decision: "approve" },
    });
    expect((await json(decide, 409)).error.code).toBe("stale");
    runner.send({ type: "events", epoch, events: [agentEvent(cap + 2), asking(cap + 3, refused)] });
    expect(await runner.next("ack")).toEqual({ type: "ack", highestSourceSeq: cap + 3 });
    expect((await getRun(run.id)).pendingApprovals).toHaveLength(cap);
  });

  it("the run record carries summaries; the full request is at GET /approvals/:requestId", async () => {
    const { run, runner, epoch, viewerToken } = await claimedRun();
    const big = "y".repeat(64 * 1024);
    runner.send({ type: "events", epoch, events: [asking(1, "small"), asking(2, "large", { patch: big })] });
    await runner.next("ack");
    const record = await getRun(run.id);
    const [small, large] = record.pendingApprovals;
    expect(small).toMatchObject({ requestId: "small", state: "pending", requestedSeq: 3, truncated: false });
    expect(small?.data).toEqual({ requestId: "small", tool: "shell", command: "step 1" });
    expect(large).toMatchObject({ requestId: "large", requestedSeq: 4, truncated: true, data: null });
    expect(large?.bytes).toBeGreaterThan(64 * 1024);
    expect(JSON.stringify(record).length).toBeLessThan(8 * APPROVAL_SUMMARY_DATA_BYTES);
    const full = await json(
      await call(`/v1/runs/${run.id}/approvals/large`, {
        key: null,
        headers: { authorization: `Bearer ${viewerToken}` },
      }),
      200,
    );
    expect(full).toMatchObject({ requestId: "large", state: "pending", requestedSeq: 4 });
    expect(full.data).toEqual({ requestId: "large", tool: "shell", command: "step 2", patch: big });
    expect((await json(await call(`/v1/runs/${run.id}/approvals/nope`), 404)).error.code).toBe("not_found");
    expect((await json(await call(`/v1/runs/${run.id}/approvals/large`, { key: KEY_B }), 404)).error.code).toBe(
      "not_found",
    );
  });
});
