import { describe, expect, it } from "vitest";
import { allEvents, call, createRun, getRun, json, KEY_B, uniqueRunId } from "./helpers.ts";
import { agentEvent, claim } from "./sockets.ts";

describe("creating runs", () => {
  it("creates a queued run with tokens and a run.created event", async () => {
    const runId = uniqueRunId();
    const created = await json(
      await call("/v1/runs", { method: "POST", json: { runId, input: { prompt: "hi" }, metadata: { team: "x" } } }),
      201,
    );
    expect(created.run).toMatchObject({
      id: runId,
      status: "queued",
      epoch: 0,
      lastSeq: 1,
      highestSourceSeq: 0,
      outcome: null,
      input: { prompt: "hi" },
      metadata: { team: "x" },
    });
    expect(created.run.runner).toEqual({ id: null, connected: false, leaseExpiresAt: null });
    expect(created.runnerToken).toMatch(/^rt1\./);
    expect(created.viewerToken).toMatch(/^rt1\./);
    const events = await allEvents(runId);
    expect(events.map((e) => [e.seq, e.source, e.type])).toEqual([[1, "control", "run.created"]]);
  });

  it("generates a run id when none is given", async () => {
    const created = await json(await call("/v1/runs", { method: "POST", json: {} }), 201);
    expect(created.run.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("is idempotent for an identical body and refuses a different one with 409", async () => {
    const runId = uniqueRunId();
    const body = { runId, input: "same", timeouts: { runMs: 60_000 } };
    const first = await json(await call("/v1/runs", { method: "POST", json: body }), 201);
    const again = await json(await call("/v1/runs", { method: "POST", json: body }), 200);
    expect(again.run.id).toBe(first.run.id);
    expect(again.run.createdAt).toBe(first.run.createdAt);
    const conflict = await json(await call("/v1/runs", { method: "POST", json: { ...body, input: "different" } }), 409);
    expect(conflict.error.code).toBe("conflict");
    expect((await getRun(runId)).input).toBe("same");
    expect(await allEvents(runId)).toHaveLength(1);
  });

  it("fills in default timeouts and keeps overrides", async () => {
    const { run } = await createRun({ timeouts: { heartbeatMs: 5_000 } });
    expect(run.timeouts).toEqual({
      claimMs: 900_000,
      heartbeatMs: 5_000,
      takeoverMs: 300_000,
      approvalMs: 86_400_000,
      idleMs: 3_600_000,
      runMs: 604_800_000,
      recoverMs: 3_600_000,
    });
  });

  it.each([
    ["malformed JSON", "{not json", 400, "invalid_json"],
    ["an unknown field", JSON.stringify({ surprise: 1 }), 422, "invalid_body"],
    ["a bad run id", JSON.stringify({ runId: "-starts-with-dash" }), 422, "invalid_body"],
    ["a zero timeout", JSON.stringify({ timeouts: { claimMs: 0 } }), 422, "invalid_body"],
    ["an oversized body", JSON.stringify({ input: "x".repeat(1024 * 1024 + 1) }), 413, "payload_too_large"],
  ])("refuses %s with %i and stores nothing", async (_name, body, status, code) => {
    const before = await json(await call("/v1/runs?limit=200", { key: KEY_B }), 200);
    const response = await call("/v1/runs", {
      method: "POST",
      body,
      key: KEY_B,
      headers: { "content-type": "application/json" },
    });
    const error = await json(response, status);
    expect(error.error.code).toBe(code);
    expect(typeof error.error.message).toBe("string");
    const after = await json(await call("/v1/runs?limit=200", { key: KEY_B }), 200);
    expect(after.runs).toEqual(before.runs);
  });
});

describe("reading runs", () => {
  it("answers 404 for an unknown run and for another tenant's run", async () => {
    expect((await json(await call(`/v1/runs/${uniqueRunId()}`), 404)).error.code).toBe("not_found");
    const { run } = await createRun();
    expect((await json(await call(`/v1/runs/${run.id}`, { key: KEY_B }), 404)).error.code).toBe("not_found");
    expect((await json(await call(`/v1/runs/${run.id}/events`, { key: KEY_B }), 404)).error.code).toBe("not_found");
    expect(
      (
        await json(
          await call(`/v1/runs/${run.id}/commands`, {
            method: "POST",
            key: KEY_B,
            json: { commandId: "c", type: "interrupt" },
          }),
          404,
        )
      ).error.code,
    ).toBe("not_found");
    expect((await getRun(run.id)).lastSeq).toBe(1);
  });

  it("lists the tenant's runs newest first, filtered by status, in pages", async () => {
    const tenantKey = KEY_B;
    const created: Array<{ id: string; createdAt: string }> = [];
    for (let i = 0; i < 5; i++) created.push((await createRun({ metadata: { i } }, tenantKey)).run);
    const { run: finished, runnerToken } = await createRun({}, tenantKey);
    created.push(finished);
    const { runner, epoch } = await claim(finished.id, runnerToken);
    runner.send({ type: "complete", epoch, outcome: { status: "succeeded" } });
    await runner.next("completed");
    // Newest first; runs created in the same millisecond come in descending id order.
    const newestFirst = [...created]
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
      .map((run) => run.id);

    const firstPage = await json(await call("/v1/runs?limit=2", { key: tenantKey }), 200);
    expect(firstPage.runs.map((r: { runId: string }) => r.runId)).toEqual(newestFirst.slice(0, 2));
    const secondPage = await json(
      await call(`/v1/runs?limit=2&cursor=${firstPage.nextCursor}`, { key: tenantKey }),
      200,
    );
    expect(secondPage.runs.map((r: { runId: string }) => r.runId)).toEqual(newestFirst.slice(2, 4));
    const lastPage = await json(
      await call(`/v1/runs?limit=2&cursor=${secondPage.nextCursor}`, { key: tenantKey }),
      200,
    );
    expect(lastPage.runs.map((r: { runId: string }) => r.runId)).toEqual(newestFirst.slice(4, 6));
    expect(lastPage.nextCursor).toBeNull();
    const succeeded = await json(await call("/v1/runs?status=succeeded", { key: tenantKey }), 200);
    expect(succeeded.runs.map((r: { runId: string }) => r.runId)).toContain(finished.id);
    expect(succeeded.runs.every((r: { status: string }) => r.status === "succeeded")).toBe(true);
    const otherTenant = await json(await call("/v1/runs?limit=200"), 200);
    expect(otherTenant.runs.map((r: { runId: string }) => r.runId)).not.toContain(finished.id);
  });

  it("rejects bad list queries with 400", async () => {
    expect((await json(await call("/v1/runs?limit=0"), 400)).error.code).toBe("invalid_query");
    expect((await json(await call("/v1/runs?status=bogus"), 400)).error.code).toBe("invalid_query");
    expect((await json(await call("/v1/runs?cursor=nonsense"), 400)).error.code).toBe("invalid_query");
  });
});

describe("paging events", () => {
  it("pages with after/limit, reports hasMore and nextAfter, and bounds limit to 1..500", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "events", epoch, events: Array.from({ length: 150 }, (_, i) => agentEvent(i + 1)) });
    expect((await runner.next("ack")).highestSourceSeq).toBe(150);
    // 1 run.created + 1 run.claimed + 150 agent events
    const defaultPage = await json(await call(`/v1/runs/${run.id}/events`), 200);
    expect(defaultPage.events).toHaveLength(100);
    expect(defaultPage).toMatchObject({ nextAfter: 100, hasMore: true, status: "running" });
    const tail = await json(await call(`/v1/runs/${run.id}/events?after=100&limit=500`), 200);
    expect(tail.events.map((e: { seq: number }) => e.seq)).toEqual(Array.from({ length: 52 }, (_, i) => 101 + i));
    expect(tail).toMatchObject({ nextAfter: 152, hasMore: false });
    const empty = await json(await call(`/v1/runs/${run.id}/events?after=152`), 200);
    expect(empty).toMatchObject({ events: [], nextAfter: 152, hasMore: false });
    for (const bad of ["limit=0", "limit=501", "limit=abc", "after=-1"]) {
      const error = await json(await call(`/v1/runs/${run.id}/events?${bad}`), 400);
      expect(error.error.code).toBe("invalid_query");
    }
  });
});

describe("deleting runs", () => {
  it("a live run cannot be deleted", async () => {
    const { run } = await createRun();
    expect((await json(await call(`/v1/runs/${run.id}`, { method: "DELETE" }), 409)).error.code).toBe("not_terminal");
    expect((await getRun(run.id)).status).toBe("queued");
  });

  it("a finished run is purged: every read answers 410 with its final status, and its id stays taken", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "events", epoch, events: [agentEvent(1)] });
    await runner.next("ack");
    runner.send({ type: "complete", epoch, outcome: { status: "failed", exitCode: 3 } });
    await runner.next("completed");
    expect(await json(await call(`/v1/runs/${run.id}`, { method: "DELETE" }), 200)).toEqual({ status: "failed" });
    const gone = await json(await call(`/v1/runs/${run.id}`), 410);
    expect(gone).toMatchObject({ error: { code: "gone" }, status: "failed" });
    expect(typeof gone.finishedAt).toBe("string");
    expect((await json(await call(`/v1/runs/${run.id}/events`), 410)).status).toBe("failed");
    expect((await json(await call(`/v1/runs/${run.id}`, { method: "DELETE" }), 410)).error.code).toBe("gone");
    expect((await json(await call("/v1/runs", { method: "POST", json: { runId: run.id } }), 410)).error.code).toBe(
      "gone",
    );
  });

  it("a purged run leaves the tenant's list", async () => {
    const { run } = await createRun();
    await json(await call(`/v1/runs/${run.id}/cancel`, { method: "POST" }), 202);
    await json(await call(`/v1/runs/${run.id}`, { method: "DELETE" }), 200);
    const listed = await json(await call("/v1/runs?limit=200"), 200);
    expect(listed.runs.map((r: { runId: string }) => r.runId)).not.toContain(run.id);
  });
});

describe("routing", () => {
  it("answers unknown routes with a JSON 404", async () => {
    expect((await json(await call("/v2/nothing"), 404)).error.code).toBe("not_found");
  });
});
