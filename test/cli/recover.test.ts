import { describe, expect, test } from "vitest";
import type { RunRecord } from "../../src/protocol/index.ts";
import { waitFor } from "../support/wait.ts";
import { cli, lines, ndjson } from "./harness/cli.ts";
import { useEdge } from "./harness/edge.ts";

const edge = useEdge();
const run = (args: string[]) => cli(edge.url, args);

/** A claimed run whose runner reported a session and then vanished; it ends up `recovering`. */
async function lostRun(runId: string): Promise<void> {
  const { runner } = await edge.claimedRun({ runId, timeouts: { heartbeatMs: 1000, takeoverMs: 1000 } });
  await runner.emit([{ type: "agent.session", data: { provider: "claude-code", id: "sess-42" } }]);
  runner.close();
  await waitFor(`run ${runId} to enter recovering`, async () => (await edge.api.getRun(runId)).status === "recovering");
}

describe("recover", () => {
  test("get explains the recovery; resume without a checkpoint is refused; restart is decided once", async () => {
    await lostRun("lost-1");
    const shown = await run(["get", "lost-1"]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^status +recovering \(ambiguous\)$/m);
    expect(shown.stdout).toMatch(/^generation +1 · claude-code session sess-42$/m);
    expect(shown.stdout).toMatch(/^checkpoint +none$/m);
    expect(shown.stdout).toContain("decide: agent-run recover lost-1 resume|restart|fail");

    const resume = await run(["recover", "lost-1", "resume"]);
    expect(resume.code).toBe(4);
    expect(resume.stderr).toMatch(/^agent-run: not_resumable: .+\n$/);

    const restart = await run(["recover", "lost-1", "restart", "--command-id", "op-1"]);
    expect(restart).toMatchObject({ code: 0, stderr: "" });
    expect(lines(restart.stdout)).toEqual([
      "restart chosen for lost-1 · command op-1 · run recovering; the next `runner-bridge run` for this run starts the agent over",
    ]);
    const repeat = await run(["recover", "lost-1", "restart", "--command-id", "op-1", "--json"]);
    expect(repeat.code).toBe(0);
    const [answer, ...rest] = ndjson(repeat.stdout);
    expect(rest).toEqual([]);
    expect(answer).toMatchObject({ created: false, decision: { action: "restart", commandId: "op-1" } });
    expect((answer?.run as RunRecord | undefined)?.recovery?.mode).toBe("restart");

    const other = await run(["recover", "lost-1", "fail", "--command-id", "op-2"]);
    expect(other.code).toBe(4);
    expect(other.stderr).toMatch(/^agent-run: conflict: .+\n$/);
    expect((await edge.api.getRun("lost-1")).status).toBe("recovering");
  });

  test("fail ends the run failed (recovery_declined); a later decision or a run not recovering is refused", async () => {
    await lostRun("lost-2");
    const failed = await run(["recover", "lost-2", "fail"]);
    expect(failed.code).toBe(0);
    expect(failed.stdout).toMatch(/^fail chosen for lost-2 · command cli-\S+ · run failed; the run is failed/);
    const record = await edge.api.getRun("lost-2");
    expect(record.outcome?.error?.code).toBe("recovery_declined");

    // After a decision the same recovery answers which one won; a run never lost is not recovering.
    const again = await run(["recover", "lost-2", "restart"]);
    expect(again.code).toBe(4);
    expect(again.stderr).toMatch(/^agent-run: conflict: the recovery was already decided: fail .+\n$/);
    await edge.api.createRun({ runId: "fresh-1" });
    const fresh = await run(["recover", "fresh-1", "restart"]);
    expect(fresh.code).toBe(4);
    expect(fresh.stderr).toMatch(/^agent-run: not_recovering: .+\n$/);
  });

  test("an action other than resume, restart or fail is a usage error", async () => {
    const out = await run(["recover", "any-run", "retry"]);
    expect(out.code).toBe(64);
    expect(out.stderr).toContain("usage: agent-run recover ID resume|restart|fail");
  });
});
