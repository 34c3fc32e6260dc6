import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, Client, createClient, NOT_CALLS, OPERATIONS } from "../../client/src/index.ts";
import { useDevServer } from "../support/dev-server.ts";
import { ALPHA } from "../support/api.ts";

// The SDK's calls against a real `wrangler dev` (the served OpenAPI document, refusals), and its
// retry and timeout rules against a plain Node server that answers as each case needs.

const dev = useDevServer();

describe("every operation of the OpenAPI document", () => {
  it("has an SDK call (or a stated reason it is none), and every call named exists", async () => {
    const client = createClient({ url: dev.url, key: ALPHA });
    const document = (await client.openapi()) as { paths: Record<string, Record<string, unknown>> };
    const methods = ["get", "put", "post", "delete", "patch", "head"];
    const served = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((m) => methods.includes(m))
        .map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(served.length).toBeGreaterThan(30);
    const unmapped = served.filter((op) => !(op in OPERATIONS) && !(op in NOT_CALLS));
    expect(unmapped, "operations without an SDK call").toEqual([]);
    for (const [op, name] of Object.entries(OPERATIONS)) {
      expect(typeof (Client.prototype as unknown as Record<string, unknown>)[name], `${op} → ${name}`).toBe("function");
    }
  });
});

describe("calls against the edge", () => {
  it("create, command (repeated by commandId), read events, cancel", async () => {
    const client = createClient({ url: dev.url, key: ALPHA });
    const created = await client.createRun({ agent: "sdk-calls-test", metadata: { case: "calls" } });
    const runId = created.run.id;
    const again = await client.createRun({ runId, agent: "sdk-calls-test", metadata: { case: "calls" } });
    expect(again.run.id).toBe(runId);
    const first = await client.command(runId, { commandId: "c-1", type: "input", text: "hi" });
    const repeat = await client.command(runId, { commandId: "c-1", type: "input", text: "hi" });
    expect(repeat.command).toEqual(first.command);
    const page = await client.events(runId);
    expect(page.events.map((e) => e.seq)).toEqual(page.events.map((_, i) => i + 1));
    const all = [];
    for await (const event of client.allEvents(runId)) all.push(event);
    expect(all).toEqual(page.events);
    const cancelled = await client.cancel(runId, { commandId: "cancel-1", reason: "test" });
    expect(cancelled.run.id).toBe(runId);
    expect((await client.getRun(runId)).id).toBe(runId);
  });

  it("a refusal is one ApiError with the API's code, status and message", async () => {
    const client = createClient({ url: dev.url, key: ALPHA });
    const missing = await client.getRun("no-such-run").catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(ApiError);
    expect(missing).toMatchObject({ code: "not_found", status: 404 });
    expect((missing as ApiError).message.length).toBeGreaterThan(0);
    const bad = await createClient({ url: dev.url, key: "wrong-key" })
      .listRuns()
      .catch((err: unknown) => err);
    expect(bad).toMatchObject({ code: "unauthorized", status: 401 });
    const invalid = await client.command("whatever", { commandId: "", type: "input", text: "x" }).catch((e) => e);
    expect(invalid).toMatchObject({ status: 422 });
    expect(typeof (invalid as ApiError).code).toBe("string");
  });
});

describe("retries and timeouts", () => {
  let server: http.Server;
  let url = "";
  const hits = new Map<string, number>();
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const path = req.url ?? "";
      const hit = (hits.get(path) ?? 0) + 1;
      hits.set(path, hit);
      if (path.startsWith("/v1/runs/flaky")) {
        if (hit <= 2) {
          res.writeHead(503, { "content-type": "application/json" });
          return void res.end(JSON.stringify({ error: { code: "unavailable", message: "try again" } }));
        }
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end(JSON.stringify({ id: "flaky", hit }));
      }
      if (path.startsWith("/v1/runs/silent")) return; // never answers
      res.writeHead(503, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "unavailable", message: "down" } }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });
  const client = () => createClient({ url, key: "k", retryMinMs: 10, retryMaxMs: 40, attempts: 3 });

  it("retries a GET through 5xx answers, within the attempt bound", async () => {
    const run = (await client().getRun("flaky")) as unknown as { hit: number };
    expect(run.hit).toBe(3);
    const refused = await client()
      .getRun("down")
      .catch((e) => e);
    expect(refused).toMatchObject({ code: "unavailable", status: 503 });
    expect(hits.get("/v1/runs/down")).toBe(3);
  });

  it("retries a command (keyed by commandId) but never a create without runId or a token mint", async () => {
    await client()
      .command("down2", { commandId: "c", type: "interrupt" })
      .catch(() => {});
    expect(hits.get("/v1/runs/down2/commands")).toBe(3);
    await client()
      .createRun({})
      .catch(() => {});
    expect(hits.get("/v1/runs")).toBe(1);
    await client()
      .mintToken("down3", { role: "viewer" })
      .catch(() => {});
    expect(hits.get("/v1/runs/down3/tokens")).toBe(1);
  });

  it("times out per call, and an AbortSignal ends a call as aborted without retrying", async () => {
    const timedOut = await createClient({ url, key: "k", attempts: 1 })
      .getRun("silent", { timeoutMs: 200 })
      .catch((e) => e);
    expect(timedOut).toMatchObject({ code: "timeout" });
    const abort = new AbortController();
    const pending = client()
      .getRun("silent-abort", { timeoutMs: 10_000 })
      .catch((e) => e);
    setTimeout(() => abort.abort(), 50);
    const aborted = await createClient({ url, key: "k" })
      .getRun("silent-abort2", { signal: abort.signal })
      .catch((e) => e);
    expect(aborted).toMatchObject({ code: "aborted" });
    expect(hits.get("/v1/runs/silent-abort2")).toBe(1);
    void pending;
  });
});
