import { describe, expect, test } from "vitest";
import type { RunEvent } from "../../src/protocol/index.ts";
import { expectExit, lines, ndjson, startCli } from "./harness/cli.ts";
import { useEdge } from "./harness/edge.ts";
import { startProxy } from "../support/proxy.ts";
import type { TestRunner } from "./harness/runner.ts";
import { afterApproval, beforeApproval, expectedTranscript, maskTimes, render } from "./harness/session.ts";

const edge = useEdge();

/** Approves r-1 (reason "ok") as an operator would, acks it as the runner, and finishes the session. */
async function approveAndFinish(runId: string, runner: TestRunner): Promise<void> {
  const approved = await edge.api.request("POST", `/v1/runs/${runId}/approvals/r-1`, {
    decision: "approve",
    reason: "ok",
  });
  expect(approved.status).toBe(201);
  await runner.ack(await runner.command(), "applied");
  await edge.api.waitForStatus(runId, "running");
  await runner.emit(afterApproval(runId));
  await runner.complete({ status: "succeeded", exitCode: 0 });
}

describe("watch", () => {
  test("prints the transcript live and exits 0 when the run succeeds; --json is the stored log line for line", async () => {
    const { run, runner } = await edge.claimedRun({ runId: "w-1", agent: { name: "test-agent" } });
    const plain = startCli(edge.url, ["watch", run.id]);
    const json = startCli(edge.url, ["watch", run.id, "--json"]);
    const late = startCli(edge.url, ["watch", run.id, "--json", "--after", "5"]);
    await runner.emit(beforeApproval(run.id));
    await plain.waitForStdout("the approval request", (out) => out.includes("approval r-1 requested"));
    await approveAndFinish(run.id, runner);

    await expectExit(plain, 0);
    await expectExit(json, 0);
    await expectExit(late, 0);
    const stored = await edge.api.events(run.id);
    expect(maskTimes(lines(plain.stdout()))).toEqual(expectedTranscript(run.id));
    expect(plain.stdout()).toBe(render(run.id, stored));
    expect(ndjson<RunEvent>(json.stdout())).toEqual(stored);
    expect(ndjson<RunEvent>(late.stdout())).toEqual(stored.slice(5));
    for (const proc of [plain, json, late]) expect(proc.stderr()).toBe("");
  });

  test("exit status follows the outcome: 1 failed, 2 cancelled, 3 timed_out, live or already over", async () => {
    const failing = await edge.claimedRun({ runId: "x-failed" });
    const failed = startCli(edge.url, ["watch", "x-failed"]);
    await failed.waitForStdout("the claim", (out) => out.includes("claimed by test-runner"));
    await failing.runner.complete({ status: "failed", exitCode: 2, error: { code: "agent_exit", message: "boom" } });
    await expectExit(failed, 1);
    expect(lines(failed.stdout()).at(-1)).toMatch(/^\d\d:\d\d:\d\d run finished · failed · exit 2 · agent_exit: boom$/);

    await edge.api.createRun({ runId: "x-cancelled" });
    const cancelled = startCli(edge.url, ["watch", "x-cancelled", "--json"]);
    await cancelled.waitForStdout("run.created", (out) => out.includes("run.created"));
    await edge.api.request("POST", "/v1/runs/x-cancelled/cancel", { reason: "not needed" });
    await expectExit(cancelled, 2);
    expect(ndjson<RunEvent>(cancelled.stdout())).toEqual(await edge.api.events("x-cancelled"));

    await edge.api.createRun({ runId: "x-timed-out", timeouts: { claimMs: 1000 } });
    const timedOut = startCli(edge.url, ["watch", "x-timed-out"]);
    await expectExit(timedOut, 3);
    expect(lines(timedOut.stdout()).at(-1)).toMatch(/run finished · timed_out · claim_timeout: /);

    for (const [runId, code] of [
      ["x-failed", 1],
      ["x-cancelled", 2],
      ["x-timed-out", 3],
    ] as const) {
      const over = startCli(edge.url, ["watch", runId, "--json"]);
      expect(await over.waitExit()).toBe(code);
      expect(ndjson<RunEvent>(over.stdout())).toEqual(await edge.api.events(runId));
    }
  });

  test("across a server restart every event is printed once and none is missed; --give-up-ms bounds the wait", async () => {
    // a long lease, so however long the restart takes the run is not stalled meanwhile
    const { run, runner } = await edge.claimedRun({
      runId: "w-restart",
      agent: { name: "test-agent" },
      timeouts: { heartbeatMs: 300_000 },
    });
    const session = beforeApproval(run.id);
    await runner.emit(session.slice(0, 4)); // the first message is left open mid-stream
    const plain = startCli(edge.url, ["watch", run.id]);
    const json = startCli(edge.url, ["watch", run.id, "--json"]);
    const impatient = startCli(edge.url, ["watch", run.id, "--json", "--give-up-ms", "1500"]);
    const seqs = (text: string) => ndjson<RunEvent>(text).map((e) => e.seq);
    for (const proc of [json, impatient]) await proc.waitForStdout("seq 6", (out) => seqs(out).includes(6));
    await plain.waitForStdout("seq 6", (out) => out.endsWith("assistant: Looking at the failing "));

    await edge.stop();
    await runner.dropped();
    await expectExit(impatient, 4);
    expect(lines(impatient.stderr())).toEqual([
      expect.stringMatching(/^agent-run: connection lost \(.+\); reconnecting after seq 6$/),
      expect.stringMatching(
        new RegExp(
          `^agent-run: unreachable: lost the watch connection to ${edge.url} \\(.+\\) and could not reconnect within 1500 ms$`,
        ),
      ),
    ]);

    await edge.start();
    await runner.claim();
    await runner.emit(session.slice(4));
    await approveAndFinish(run.id, runner);
    await expectExit(plain, 0);
    await expectExit(json, 0);

    const stored = await edge.api.events(run.id);
    expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i + 1));
    expect(ndjson<RunEvent>(json.stdout())).toEqual(stored);
    expect(plain.stdout()).toBe(render(run.id, stored));
    // The runner's new claim lands while the first message is still open, so it splits that line.
    const expected = expectedTranscript(run.id);
    expected.splice(
      3,
      2,
      "HH:MM:SS assistant: Looking at the failing ",
      "HH:MM:SS claimed by test-runner · epoch 2 · replaces epoch 1",
      "HH:MM:SS assistant: test.",
      "         It needs a fix.",
    );
    expect(maskTimes(lines(plain.stdout()))).toEqual(expected);
    for (const proc of [plain, json]) {
      expect(lines(proc.stderr())).toEqual([
        expect.stringMatching(/^agent-run: connection lost \(.+\); reconnecting after seq 6$/),
        expect.stringMatching(/^agent-run: reconnected; resuming after seq 6$/),
      ]);
    }
  });

  test("a socket that goes silent while the log moves on is noticed (--check-ms) and replaced, nothing lost", async () => {
    const { run, runner } = await edge.claimedRun({ runId: "w-silent" });
    const proxy = await startProxy(Number(new URL(edge.url).port), { keepCompression: true });
    try {
      const json = startCli(proxy.url, ["watch", run.id, "--json", "--check-ms", "300"]);
      await json.waitForStdout("the claim", (out) => out.includes("run.claimed"));
      expect(proxy.freezeAll()).toBeGreaterThan(0);
      await runner.emit([{ type: "CUSTOM", data: { name: "after-freeze", value: 1 } }]);
      await json.waitForStdout("the event sent after the freeze", (out) => out.includes("after-freeze"));
      await runner.complete({ status: "succeeded" });
      await expectExit(json, 0);
      expect(ndjson<RunEvent>(json.stdout())).toEqual(await edge.api.events(run.id));
      expect(lines(json.stderr())).toEqual([
        "agent-run: connection lost (the log is at seq 3 but the socket stopped at 2); reconnecting after seq 2",
        "agent-run: reconnected; resuming after seq 2",
      ]);
    } finally {
      await proxy.close();
    }
  });
});
