import { describe, expect, it } from "vitest";
import { call, createRun, json, KEY_B, uniqueRunId } from "./helpers.ts";

describe("POST /v1/runs/{runId}/rerun", () => {
  it("makes a new run with the old one's agent, input, metadata and timeouts, linked both ways", async () => {
    const { run: old } = await createRun({
      agent: { name: "codex" },
      input: { prompt: "fix the tests" },
      metadata: { tags: ["payments"] },
      timeouts: { idleMs: 120_000, runMs: 3_600_000 },
    });
    await json(await call(`/v1/runs/${old.id}/cancel`, { method: "POST", json: {} }), 202);
    const first = await json(await call(`/v1/runs/${old.id}/rerun`, { method: "POST" }), 201);
    expect(first.run).toMatchObject({
      id: `${old.id}-r1`,
      status: "queued",
      agent: old.agent,
      input: old.input,
      timeouts: old.timeouts,
      retentionMs: old.retentionMs,
      metadata: { tags: ["payments"], rerunOf: old.id },
    });
    expect(first.runnerToken).toMatch(/^rt1\./);
    const second = await json(
      await call(`/v1/runs/${old.id}/rerun`, { method: "POST", json: { runId: "again-1" } }),
      201,
    );
    expect(second.run.id).toBe("again-1");
    // The same id again is the same run (a double click), not a third one.
    const repeat = await json(
      await call(`/v1/runs/${old.id}/rerun`, { method: "POST", json: { runId: "again-1" } }),
      200,
    );
    expect(repeat.run.id).toBe("again-1");

    expect(await json(await call(`/v1/runs/${old.id}/reruns`), 200)).toEqual({
      rerunOf: null,
      reruns: [`${old.id}-r1`, "again-1"],
    });
    expect(await json(await call(`/v1/runs/again-1/reruns`), 200)).toEqual({ rerunOf: old.id, reruns: [] });
  });

  it("refuses what create refuses and changes nothing: an unknown run, another tenant's, a bad body", async () => {
    const { run } = await createRun();
    expect((await json(await call(`/v1/runs/${uniqueRunId()}/rerun`, { method: "POST" }), 404)).error.code).toBe(
      "not_found",
    );
    expect((await call(`/v1/runs/${run.id}/rerun`, { method: "POST", key: KEY_B })).status).toBe(404);
    const bad = await call(`/v1/runs/${run.id}/rerun`, { method: "POST", json: { runId: "no spaces" } });
    expect((await json(bad, 422)).error.code).toBe("invalid_body");
    expect(await json(await call(`/v1/runs/${run.id}/reruns`), 200)).toEqual({ rerunOf: null, reruns: [] });
  });
});
