import { describe, expect, it } from "vitest";
import { allEvents, call, createRun, json, uniqueRunId } from "./helpers.ts";
import { agentEvent, claim } from "./sockets.ts";

describe("a run's log as a Durable Streams stream", () => {
  it("reads from -1 as a JSON array of the stored events, with the tail offset, open while the run lives", async () => {
    const { run, runnerToken, viewerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "events", epoch, events: [agentEvent(1), agentEvent(2)] });
    await runner.next("ack");
    const response = await call(`/v1/runs/${run.id}/stream?offset=-1`, { key: viewerToken });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("stream-up-to-date")).toBe("true");
    expect(response.headers.get("stream-closed")).toBeNull();
    expect(await response.json()).toEqual(await allEvents(run.id));
    const tail = response.headers.get("stream-next-offset");
    const head = await call(`/v1/runs/${run.id}/stream`, { method: "HEAD", key: viewerToken });
    expect(head.status).toBe(200);
    expect(head.headers.get("stream-next-offset")).toBe(tail);
    const empty = await call(`/v1/runs/${run.id}/stream?offset=${tail}`, { key: viewerToken });
    expect(await empty.json()).toEqual([]);
  });

  it("reads as closed once the run is terminal", async () => {
    const { run, runnerToken } = await createRun();
    const { runner, epoch } = await claim(run.id, runnerToken);
    runner.send({ type: "complete", epoch, outcome: { status: "succeeded" } });
    await runner.next("completed");
    const response = await call(`/v1/runs/${run.id}/stream?offset=-1&live=long-poll`);
    expect(response.headers.get("stream-closed")).toBe("true");
    const events = (await response.json()) as Array<{ type: string }>;
    expect(events.at(-1)?.type).toBe("run.finished");
    const head = await call(`/v1/runs/${run.id}/stream`, { method: "HEAD" });
    expect(head.headers.get("stream-closed")).toBe("true");
  });

  it("refuses offsets it never issued", async () => {
    const { run } = await createRun();
    expect((await json(await call(`/v1/runs/${run.id}/stream?offset=banana`), 400)).error.code).toBe("invalid_query");
    expect(
      (await json(await call(`/v1/runs/${run.id}/stream?offset=0000000000000009_0000000000000001`), 400)).error.code,
    ).toBe("invalid_query");
  });

  it("is read-only: other methods are 405 with Allow", async () => {
    const { run } = await createRun();
    const post = await call(`/v1/runs/${run.id}/stream`, { method: "POST", body: "[1]" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    expect(await allEvents(run.id)).toHaveLength(1);
  });

  it("refuses runner tokens (403) and other tenants' keys (404)", async () => {
    const { run, runnerToken } = await createRun();
    expect((await json(await call(`/v1/runs/${run.id}/stream`, { key: runnerToken }), 403)).error.code).toBe(
      "forbidden",
    );
    expect((await json(await call(`/v1/runs/${run.id}/stream`, { key: "key-b" }), 404)).error.code).toBe("not_found");
  });

  it("answers 404 for an unknown run and 410 with the final status for a purged one", async () => {
    expect((await json(await call(`/v1/runs/${uniqueRunId()}/stream`), 404)).error.code).toBe("not_found");
    const { run } = await createRun();
    await json(await call(`/v1/runs/${run.id}/cancel`, { method: "POST" }), 202);
    await json(await call(`/v1/runs/${run.id}`, { method: "DELETE" }), 200);
    expect(await json(await call(`/v1/runs/${run.id}/stream`), 410)).toMatchObject({
      error: { code: "gone" },
      status: "cancelled",
    });
  });
});
