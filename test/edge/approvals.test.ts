import { describe, expect, it } from "vitest";
import { advance, allEvents, call, createRun, getRun, json } from "./helpers.ts";
import { agentEvent, claim } from "./sockets.ts";

const approve = (runId: string, requestId: string, body: unknown) =>
  call(`/v1/runs/${runId}/approvals/${requestId}`, { method: "POST", json: body });

async function runWaitingOnApproval(requestId = "req-1") {
  const created = await createRun({ timeouts: { approvalMs: 60_000, heartbeatMs: 600_000 } });
  const session = await claim(created.run.id, created.runnerToken);
  session.runner.send({
    type: "events",
    epoch: session.epoch,
    events: [agentEvent(1), agentEvent(2, "approval.requested", { requestId, tool: "shell", command: "make deploy" })],
  });
  await session.runner.next("ack");
  return { ...created, ...session };
}

describe("approvals", () => {
  it("a runner's approval.requested makes the run wait; approving delivers the decision and resumes it", async () => {
    const { run, runner } = await runWaitingOnApproval();
    const waiting = await getRun(run.id);
    expect(waiting.status).toBe("waiting");
    expect(waiting.pendingApprovals).toMatchObject([
      { requestId: "req-1", state: "pending", requestedSeq: 4, data: { tool: "shell" } },
    ]);
    const resolved = await json(await approve(run.id, "req-1", { decision: "approve", reason: "looks fine" }), 201);
    expect(resolved.approval).toMatchObject({
      requestId: "req-1",
      state: "approved",
      decision: "approve",
      reason: "looks fine",
    });
    expect(await runner.next("command")).toMatchObject({
      kind: "approval",
      requestId: "req-1",
      decision: "approve",
      reason: "looks fine",
    });
    expect(await getRun(run.id)).toMatchObject({ status: "running", pendingApprovals: [] });
    const tail = (await allEvents(run.id)).slice(-2);
    expect(tail.map((e) => [e.type, e.data])).toEqual([
      ["approval.resolved", { requestId: "req-1", decision: "approve", reason: "looks fine" }],
      [
        "command.queued",
        {
          commandId: "~approval:req-1",
          controllerSeq: 1,
          type: "approval",
          requestId: "req-1",
          decision: "approve",
          reason: "looks fine",
        },
      ],
    ]);
  });

  it("an identical repeat answers 200; a different decision, or an unknown request, is 409 stale", async () => {
    const { run } = await runWaitingOnApproval();
    await json(await approve(run.id, "req-1", { decision: "deny" }), 201);
    expect((await json(await approve(run.id, "req-1", { decision: "deny" }), 200)).approval.state).toBe("denied");
    expect((await json(await approve(run.id, "req-1", { decision: "approve" }), 409)).error.code).toBe("stale");
    expect((await json(await approve(run.id, "nope", { decision: "approve" }), 409)).error.code).toBe("stale");
    expect((await json(await approve(run.id, "req-1", { decision: "maybe" }), 422)).error.code).toBe("invalid_body");
    expect((await allEvents(run.id)).filter((e) => e.type === "approval.resolved")).toHaveLength(1);
  });

  it("expires when nobody answers in time, and the runner receives a deny", async () => {
    const { run, runner } = await runWaitingOnApproval();
    await advance(run.id, 60_000);
    const expired = (await allEvents(run.id)).filter((e) => e.type === "approval.expired");
    expect(expired.map((e) => e.data)).toEqual([{ requestId: "req-1", decision: "deny", reason: "approval_timeout" }]);
    expect(await runner.next("command")).toMatchObject({
      kind: "approval",
      requestId: "req-1",
      decision: "deny",
      reason: "approval_timeout",
    });
    expect(await getRun(run.id)).toMatchObject({ status: "running", pendingApprovals: [] });
    expect((await json(await approve(run.id, "req-1", { decision: "approve" }), 409)).error.code).toBe("stale");
  });
});
