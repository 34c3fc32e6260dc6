import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createRun, KEY_B, uniqueRunId } from "../helpers.ts";
import { lose, patterned, runWith, session, sha256 } from "../recovery-helpers.ts";
import { connectHost, createPoolRun, mintPoolKey } from "../pool-helpers.ts";
import { agentEvent, claim } from "../sockets.ts";
import { Documented, fetchDocument } from "./documented.ts";

// Documented requests to every route, answered for real, each answer checked against the
// document: its status must be documented for the operation, its JSON body must match the
// schema of that status (closed: no undocumented fields). The last test checks every documented
// success answer of the API was among them.

let api: Documented;
beforeAll(async () => {
  api = new Documented(await fetchDocument());
});

const RUN = "/v1/runs/{runId}";

/** A run whose runner asked for an approval, so the run is waiting. */
async function waitingRun() {
  const created = await createRun({ timeouts: { heartbeatMs: 600_000 } });
  const session = await claim(created.run.id, created.runnerToken);
  session.runner.send({
    type: "events",
    epoch: session.epoch,
    events: [agentEvent(1), agentEvent(2, "approval.requested", { requestId: "req-1", tool: "shell" })],
  });
  await session.runner.next("ack");
  return { ...created, runner: session.runner };
}

/** A finished run, purged: reads of it answer 410. */
async function purgedRun() {
  const { run } = await createRun();
  expect((await api.send("post", `${RUN}/cancel`, { runId: run.id })).status).toBe(202);
  expect((await api.send("delete", RUN, { runId: run.id })).status).toBe(200);
  return run.id;
}

describe("runs, as documented", () => {
  it("create: 201, an identical repeat 200, another body 409, a purged id 410", async () => {
    const runId = uniqueRunId();
    const body = { runId, input: { prompt: "hi" }, metadata: { repo: "acme/web" }, timeouts: { idleMs: 60_000 } };
    const created = await api.send("post", "/v1/runs", {}, { json: body });
    expect(created.status).toBe(201);
    expect(created.body.run).toMatchObject({ id: runId, status: "queued", lastSeq: 1 });
    expect((await api.send("post", "/v1/runs", {}, { json: body })).status).toBe(200);
    expect((await api.send("post", "/v1/runs", {}, { json: { runId, input: 2 } })).body.error.code).toBe("conflict");
    const purged = await purgedRun();
    const gone = await api.send("post", "/v1/runs", {}, { json: { runId: purged } });
    expect(gone).toMatchObject({ status: 410, body: { error: { code: "gone" }, status: "cancelled" } });
  });

  it("create refuses bad bodies and callers: 400, 422, 413, 401, 403", async () => {
    const { viewerToken } = await createRun();
    const send = (init: Parameters<Documented["send"]>[3]) => api.send("post", "/v1/runs", {}, init);
    expect((await send({ body: "{not json" })).body.error.code).toBe("invalid_json");
    expect((await send({ json: { runId: "-bad" } })).body.error.code).toBe("invalid_body");
    expect((await send({ json: { unknown: 1 } })).body.error.code).toBe("invalid_body");
    expect((await send({ body: JSON.stringify({ input: "x".repeat(1024 * 1024) }) })).status).toBe(413);
    expect((await send({ json: {}, key: null })).body.error.code).toBe("unauthorized");
    expect((await send({ json: {}, key: viewerToken })).body.error.code).toBe("forbidden");
  });

  it("list: 200 with a page; a bad limit 400", async () => {
    await createRun({}, KEY_B);
    const page = await api.send("get", "/v1/runs", {}, { key: KEY_B, query: "?limit=1" });
    expect(page.status).toBe(200);
    expect(page.body.runs).toHaveLength(1);
    expect((await api.send("get", "/v1/runs", {}, { query: "?limit=0" })).body.error.code).toBe("invalid_query");
    expect((await api.send("get", "/v1/runs", {}, { query: "?status=nope" })).body.error.code).toBe("invalid_query");
  });

  it("list with every filter: 200; a bad tag or createdAfter 400; usage: 200, a bad range 400", async () => {
    await createRun({ agent: { name: "docs-agent" }, tags: ["docs"], metadata: { repo: "x" } }, KEY_B);
    const query = "?tag=docs&meta.repo=x&agent=docs-agent&status=queued&createdAfter=2020-01-01T00:00:00Z&limit=5";
    const page = await api.send("get", "/v1/runs", {}, { key: KEY_B, query });
    expect(page.status).toBe(200);
    expect(page.body.runs[0]).toMatchObject({ agent: "docs-agent", tags: ["docs"] });
    expect((await api.send("get", "/v1/runs", {}, { query: "?tag=no%20space" })).body.error.code).toBe("invalid_query");
    expect((await api.send("get", "/v1/runs", {}, { query: "?createdAfter=yesterday" })).status).toBe(400);
    expect((await api.send("get", "/v1/usage", {}, { key: KEY_B, query: "?groupBy=tag" })).status).toBe(200);
    expect((await api.send("get", "/v1/usage", {}, { query: "?from=2026-02-01&to=2026-01-01" })).status).toBe(400);
  });

  it("read: 200, 404 unknown, 400 bad id, 403 another run's token, 410 purged", async () => {
    const { run } = await createRun();
    const other = await createRun();
    expect((await api.send("get", RUN, { runId: run.id })).body.id).toBe(run.id);
    expect((await api.send("get", RUN, { runId: "no-such-run" })).status).toBe(404);
    expect((await api.send("get", RUN, { runId: "-bad" })).status).toBe(400);
    expect((await api.send("get", RUN, { runId: run.id }, { key: other.viewerToken })).status).toBe(403);
    const gone = await api.send("get", RUN, { runId: await purgedRun() });
    expect(gone.body).toMatchObject({ error: { code: "gone" }, status: "cancelled" });
    expect(gone.body.finishedAt).toEqual(expect.any(String));
  });

  it("delete: 409 while running, 200 once finished, then 410", async () => {
    const { run } = await createRun();
    expect((await api.send("delete", RUN, { runId: run.id })).body.error.code).toBe("not_terminal");
    await api.send("post", `${RUN}/cancel`, { runId: run.id });
    expect((await api.send("delete", RUN, { runId: run.id })).body).toEqual({ status: "cancelled" });
    expect((await api.send("delete", RUN, { runId: run.id })).status).toBe(410);
  });

  it("tokens: 201; interact on a runner token 422; an unknown run 404", async () => {
    const { run } = await createRun();
    const minted = await api.send(
      "post",
      `${RUN}/tokens`,
      { runId: run.id },
      { json: { role: "viewer", interact: true } },
    );
    expect(minted).toMatchObject({ status: 201, body: { role: "viewer", interact: true } });
    const runner = await api.send(
      "post",
      `${RUN}/tokens`,
      { runId: run.id },
      { json: { role: "runner", interact: true } },
    );
    expect(runner.body.error.code).toBe("invalid_body");
    expect((await api.send("post", `${RUN}/tokens`, { runId: "nope" }, { json: { role: "viewer" } })).status).toBe(404);
  });

  it("dev sign-in: the key on a loopback host with DEV_SIGN_IN_KEY set, nulls on any other host", async () => {
    const worker = (exports as unknown as { default: Fetcher }).default;
    const local = await worker.fetch("http://localhost:8787/v1/dev/sign-in");
    expect(await api.expectResponse("get", "/v1/dev/sign-in", local)).toEqual({ key: "key-a", tenant: "tenant-a" });
    const elsewhere = await api.send("get", "/v1/dev/sign-in", {}, { key: null });
    expect([elsewhere.status, elsewhere.body]).toEqual([200, { key: null, tenant: null }]);
  });

  it("rerun: 201, the same id again 200; reruns: 200 both ways; an unknown run 404", async () => {
    const { run } = await createRun({ input: { prompt: "again" } });
    const made = await api.send("post", `${RUN}/rerun`, { runId: run.id }, { json: {} });
    expect(made).toMatchObject({ status: 201, body: { run: { input: { prompt: "again" } } } });
    const id = made.body.run.id;
    const same = await api.send("post", `${RUN}/rerun`, { runId: run.id }, { json: { runId: id } });
    expect(same).toMatchObject({ status: 200, body: { run: { id } } });
    const links = await api.send("get", `${RUN}/reruns`, { runId: id });
    expect(links).toMatchObject({ status: 200, body: { rerunOf: run.id, reruns: [] } });
    expect((await api.send("post", `${RUN}/rerun`, { runId: "nope" }, { json: {} })).status).toBe(404);
  });

  it("revoking tokens: one 200, an unknown id 404, all 200; the revoked token 401", async () => {
    const { run, viewerToken, viewerTokenId } = await createRun();
    const one = await api.send("delete", `${RUN}/tokens/{tokenId}`, { runId: run.id, tokenId: viewerTokenId });
    expect(one).toMatchObject({ status: 200, body: { tokenId: viewerTokenId } });
    const unknown = await api.send("delete", `${RUN}/tokens/{tokenId}`, { runId: run.id, tokenId: "nope" });
    expect(unknown.body.error.code).toBe("not_found");
    const read = await api.send("get", RUN, { runId: run.id }, { key: viewerToken });
    expect(read).toMatchObject({ status: 401, body: { error: { code: "token_revoked" } } });
    const all = await api.send("delete", `${RUN}/tokens`, { runId: run.id });
    expect(all).toMatchObject({ status: 200, body: { revoked: 1 } });
  });

  it("events: 200 with a page of documented events; a bad limit 400; an unknown run 404", async () => {
    const { run, runner } = await waitingRun();
    const page = await api.send("get", `${RUN}/events`, { runId: run.id }, { query: "?after=0&limit=500" });
    expect(page.body.events.map((e: { type: string }) => e.type)).toEqual([
      "run.created",
      "run.claimed",
      "TEXT_MESSAGE_CONTENT",
      "approval.requested",
    ]);
    expect((await api.send("get", `${RUN}/events`, { runId: run.id }, { query: "?limit=501" })).status).toBe(400);
    expect((await api.send("get", `${RUN}/events`, { runId: "nope" })).status).toBe(404);
    runner.close();
  });
});

describe("operators, as documented", () => {
  it("commands: 201, a repeat 200, another body 409, input without text 422, a finished run 409", async () => {
    const { run } = await createRun();
    const send = (json: unknown) => api.send("post", `${RUN}/commands`, { runId: run.id }, { json });
    const command = { commandId: "c-1", type: "input", text: "go on" };
    expect((await send(command)).body).toMatchObject({ created: true, command: { state: "queued" } });
    expect((await send(command)).status).toBe(200);
    expect((await send({ ...command, text: "other" })).body.error.code).toBe("conflict");
    expect((await send({ commandId: "c-2", type: "input" })).body.error.code).toBe("invalid_body");
    expect((await send({})).status).toBe(422);
    await api.send("post", `${RUN}/cancel`, { runId: run.id });
    expect((await send({ commandId: "c-3", type: "interrupt" })).body.error.code).toBe("terminal_run");
  });

  it("approvals: 201, the same decision 200, another 409 stale", async () => {
    const { run, runner } = await waitingRun();
    const decide = (json: unknown) =>
      api.send("post", `${RUN}/approvals/{requestId}`, { runId: run.id, requestId: "req-1" }, { json });
    expect((await decide({ decision: "approve" })).body.approval).toMatchObject({ state: "approved" });
    expect((await decide({ decision: "approve" })).status).toBe(200);
    expect((await decide({ decision: "deny" })).body.error.code).toBe("stale");
    runner.close();
  });

  it("one approval: 200 with the full request, 404 for a request the run never had", async () => {
    const { run, runner } = await waitingRun();
    const read = (requestId: string) => api.send("get", `${RUN}/approvals/{requestId}`, { runId: run.id, requestId });
    expect((await read("req-1")).body).toMatchObject({ requestId: "req-1", state: "pending", data: { tool: "shell" } });
    expect((await read("nope")).body.error.code).toBe("not_found");
    runner.close();
  });

  it("cancel: 202 with the run, then 200; a viewer token without interact 403", async () => {
    const { run, viewerToken } = await createRun();
    expect((await api.send("post", `${RUN}/cancel`, { runId: run.id }, { key: viewerToken })).status).toBe(403);
    const cancelled = await api.send("post", `${RUN}/cancel`, { runId: run.id }, { json: { reason: "stop" } });
    expect(cancelled).toMatchObject({ status: 202, body: { run: { status: "cancelled" } } });
    expect((await api.send("post", `${RUN}/cancel`, { runId: run.id })).status).toBe(200);
  });
});

describe("recovery, as documented", () => {
  it("recover: 201, a repeat 200, another decision 409; recovery 200; checkpoint PUT 201 then 200, GET 200", async () => {
    const live = await runWith([session(1), agentEvent(2)]);
    const params = { runId: live.runId };
    const body = patterned(3000);
    const query = `?epoch=${live.epoch}&generation=1&sourceSeq=2&digest=${await sha256(body)}`;
    const put = () => api.send("put", `${RUN}/checkpoint`, params, { key: live.runnerToken, body, query });
    expect((await put()).status).toBe(201);
    expect((await put()).status).toBe(200);
    const got = await api.send("get", `${RUN}/checkpoint`, params, { key: live.runnerToken });
    expect(got.status).toBe(200);
    expect(new Uint8Array(await got.response.arrayBuffer())).toEqual(body);
    expect((await api.send("get", `${RUN}/checkpoint`, params, { key: "key-a" })).status).toBe(403);
    live.runner.close();
    await lose(live.runId);
    const state = await api.send("get", `${RUN}/recovery`, params, { key: live.runnerToken });
    expect(state.body).toMatchObject({ status: "recovering", mode: "resume", generation: 1 });
    const decide = (json: unknown) => api.send("post", `${RUN}/recover`, params, { json });
    expect((await decide({ action: "restart", commandId: "d-1" })).status).toBe(201);
    expect((await decide({ action: "restart", commandId: "d-1" })).status).toBe(200);
    expect((await decide({ action: "fail", commandId: "d-2" })).body.error.code).toBe("conflict");
  });
});

describe("sockets and streams, as documented", () => {
  it("the runner preflight: 200 for its runner token, 403 for an API key or for another run", async () => {
    const { run, runnerToken } = await createRun();
    const preflight = await api.send("get", `${RUN}/runner`, { runId: run.id }, { key: runnerToken });
    expect(preflight.body).toEqual({ runId: run.id, status: "queued", epoch: 0 });
    expect((await api.send("get", `${RUN}/runner`, { runId: run.id })).status).toBe(403);
    expect((await api.send("get", `${RUN}/runner`, { runId: "nope" }, { key: runnerToken })).status).toBe(403);
  });

  it("watch without an upgrade: 400 for a run that exists, 404 for one that does not", async () => {
    const { run } = await createRun();
    expect((await api.send("get", `${RUN}/watch`, { runId: run.id })).body.error.code).toBe("invalid_query");
    expect((await api.send("get", `${RUN}/watch`, { runId: "nope" })).status).toBe(404);
  });

  it("a run's stream: GET 200 with documented events, HEAD 200, an unknown run 404", async () => {
    const { run } = await createRun();
    const read = await api.send("get", `${RUN}/stream`, { runId: run.id }, { query: "?offset=-1" });
    expect(read.body.map((e: { type: string }) => e.type)).toEqual(["run.created"]);
    expect(read.response.headers.get("stream-next-offset")).toEqual(expect.any(String));
    expect((await api.send("head", `${RUN}/stream`, { runId: run.id })).status).toBe(200);
    expect((await api.send("get", `${RUN}/stream`, { runId: "nope" })).status).toBe(404);
  });

  it("a run as AG-UI: GET and POST 200 with the SSE of a finished run, a bad Last-Event-ID 400, an unknown run 404", async () => {
    const { run } = await createRun();
    expect((await api.send("post", `${RUN}/cancel`, { runId: run.id })).status).toBe(202);
    const read = await api.send("get", `${RUN}/agui`, { runId: run.id });
    const types = [...String(read.body).matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1] ?? "null").type);
    expect(types).toEqual(["RUN_STARTED", "CUSTOM", "CUSTOM", "RUN_ERROR"]);
    const posted = await api.send("post", `${RUN}/agui`, { runId: run.id }, { body: "{}" });
    expect(posted.body).toBe(read.body);
    const bad = { headers: { "last-event-id": "x" } };
    expect((await api.send("get", `${RUN}/agui`, { runId: run.id }, bad)).status).toBe(400);
    expect((await api.send("get", `${RUN}/agui`, { runId: "nope" })).status).toBe(404);
  });

  it("a generic stream: create, append, read, describe, delete, preflight", async () => {
    const path = { path: `docs/${crypto.randomUUID()}` };
    const json = { headers: { "content-type": "application/json" } };
    expect((await api.send("put", "/v1/stream/{path}", path, json)).status).toBe(201);
    expect((await api.send("put", "/v1/stream/{path}", path, json)).status).toBe(200);
    expect((await api.send("post", "/v1/stream/{path}", path, { ...json, body: '{"a":1}' })).status).toBe(204);
    const producer = { "producer-id": "p-1", "producer-epoch": "0", "producer-seq": "0" };
    const produced = await api.send("post", "/v1/stream/{path}", path, {
      headers: { ...json.headers, ...producer },
      body: '{"b":2}',
    });
    expect(produced.status).toBe(200);
    const read = await api.send("get", "/v1/stream/{path}", path, { query: "?offset=-1" });
    expect(read).toMatchObject({ status: 200, body: [{ a: 1 }, { b: 2 }] });
    expect((await api.send("head", "/v1/stream/{path}", path)).status).toBe(200);
    expect((await api.send("options", "/v1/stream/{path}", path, { key: null })).status).toBe(204);
    expect((await api.send("delete", "/v1/stream/{path}", path)).status).toBe(204);
    expect((await api.send("get", "/v1/stream/{path}", path)).body.error.code).toBe("not_found");
  });

  it("a stream refuses run tokens (403) and missing credentials (401)", async () => {
    const { viewerToken } = await createRun();
    const path = { path: "docs/refused" };
    expect((await api.send("put", "/v1/stream/{path}", path, { key: viewerToken })).status).toBe(403);
    expect((await api.send("put", "/v1/stream/{path}", path, { key: null })).status).toBe(401);
  });

  it("the reference: the document, the frames' schemas and the /docs page with its files", async () => {
    expect((await api.send("get", "/openapi.json", {}, { key: null })).body.openapi).toBe("3.1.0");
    expect((await api.send("get", "/docs", {}, { key: null })).body).toContain('<script src="/docs/reference.js">');
    const script = await api.send("get", "/docs/{path}", { path: "reference.js" }, { key: null });
    expect(script.body).toContain("SwaggerUIBundle");
    expect((await api.send("get", "/docs/{path}", { path: "swagger-ui.css" }, { key: null })).status).toBe(200);
    expect((await api.send("get", "/docs/{path}", { path: "nope.js" }, { key: null })).status).toBe(404);
    expect((await api.send("get", "/schemas/runner-frames.json", {}, { key: null })).status).toBe(200);
    expect((await api.send("get", "/schemas/viewer-frames.json", {}, { key: null })).status).toBe(200);
    expect((await api.send("get", "/schemas/pool-frames.json", {}, { key: null })).status).toBe(200);
  });
});

describe("pools, as documented", () => {
  it("pool keys: mint 201, list 200, revoke 200 then a repeat 200, unknown 404, bad id 400", async () => {
    const minted = await api.send("post", "/v1/pool-keys", {}, { json: { label: "ci" } });
    expect(minted.status).toBe(201);
    expect((await api.send("get", "/v1/pool-keys")).body.keys.map((k: any) => k.id)).toContain(minted.body.id);
    expect((await api.send("delete", "/v1/pool-keys/{keyId}", { keyId: minted.body.id })).status).toBe(200);
    expect((await api.send("delete", "/v1/pool-keys/{keyId}", { keyId: minted.body.id })).status).toBe(200);
    expect((await api.send("delete", "/v1/pool-keys/{keyId}", { keyId: "nokey" })).status).toBe(404);
    expect((await api.send("delete", "/v1/pool-keys/{keyId}", { keyId: "Bad-Id" })).status).toBe(400);
    expect((await api.send("post", "/v1/pool-keys", {}, { json: { label: 3 } })).status).toBe(422);
    expect((await api.send("post", "/v1/pool-keys", {}, { key: minted.body.key })).status).toBe(403);
  });

  it("pools and queues: list 200, one queue 200, settings 200, bad settings 422, bad name 400", async () => {
    const { key } = await mintPoolKey();
    const host = await connectHost(key, { hostId: "documented-host", queue: "documented" });
    const pool = await createPoolRun({ queue: "documented" });
    await host.next("assign");
    expect((await api.send("get", "/v1/pools")).body.hosts.length).toBeGreaterThan(0);
    expect((await api.send("get", "/v1/queues")).status).toBe(200);
    expect((await api.send("get", "/v1/queues/{queue}", { queue: "documented" })).body.running).toBe(1);
    const put = (queue: string, json: unknown) => api.send("put", "/v1/queues/{queue}", { queue }, { json });
    expect((await put("documented", { maxConcurrent: 4, assignMs: 60_000 })).body).toMatchObject({ maxConcurrent: 4 });
    expect((await put("documented", { maxConcurrent: 0 })).status).toBe(422);
    expect((await put("Not A Queue", { maxConcurrent: 1 })).status).toBe(400);
    expect((await api.send("get", "/v1/runs/{runId}", { runId: pool.run.id })).body.dispatch.state).toBe("assigned");
    host.close();
  });

  it("webhooks: register 201, list 200, ping 202, deliveries 200, redeliver 202, a run's notifications 200, delete 200", async () => {
    const hooks = "/v1/webhooks/{webhookId}";
    const json = { url: "http://127.0.0.1:9/documented", events: ["run.cancelled"] };
    const created = await api.send("post", "/v1/webhooks", {}, { json });
    expect(created.status).toBe(201);
    const webhookId = created.body.id as string;
    expect((await api.send("get", "/v1/webhooks")).body.webhooks.map((w: any) => w.id)).toContain(webhookId);
    expect((await api.send("post", "/v1/webhooks", {}, { json: { ...json, url: "http://example.com/" } })).status).toBe(
      422,
    );
    const { run } = await createRun();
    expect((await api.send("post", `${RUN}/cancel`, { runId: run.id })).status).toBe(202);
    const notified = await api.send("get", `${RUN}/notifications`, { runId: run.id });
    const delivery = notified.body.deliveries.find((d: any) => d.webhookId === webhookId);
    expect(delivery).toMatchObject({ type: "run.cancelled", runId: run.id });
    expect((await api.send("post", `${hooks}/ping`, { webhookId })).body.type).toBe("webhook.ping");
    expect((await api.send("get", `${hooks}/deliveries`, { webhookId }, { query: "?limit=5" })).status).toBe(200);
    expect((await api.send("get", `${hooks}/deliveries`, { webhookId }, { query: "?limit=0" })).status).toBe(400);
    const redeliver = `${hooks}/deliveries/{deliveryId}/redeliver`;
    expect((await api.send("post", redeliver, { webhookId, deliveryId: delivery.id })).status).toBe(202);
    expect((await api.send("post", redeliver, { webhookId, deliveryId: "msg_none" })).status).toBe(404);
    expect((await api.send("delete", hooks, { webhookId })).status).toBe(200);
    expect((await api.send("delete", hooks, { webhookId })).status).toBe(404);
  });
});

describe("coverage", () => {
  it("every documented success answer of every operation was checked above", () => {
    const documented: string[] = [];
    for (const [path, item] of Object.entries<any>(api.document.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        for (const status of Object.keys(operation.responses)) {
          // A GET's 204 is a long-poll timing out (the stream tests wait for it), 101 a socket opening.
          const longPollTimeout = method === "get" && status === "204";
          if (status.startsWith("2") && !longPollTimeout) {
            documented.push(`${method.toUpperCase()} ${path} ${status}`);
          }
        }
      }
    }
    expect(documented.filter((answer) => !api.seen.has(answer))).toEqual([]);
  });
});
