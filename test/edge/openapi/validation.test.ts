import { beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../../src/protocol/index.ts";
import { allEvents, createRun, getRun } from "../helpers.ts";
import { Documented, fetchDocument, type Method } from "./documented.ts";

// The validators in front of every route with a JSON body or a query: bad input gets a
// documented 4xx in the one error shape and changes nothing. The routes come from the document,
// so a route added later is covered without touching this file.

let api: Documented;
beforeAll(async () => {
  api = new Documented(await fetchDocument());
});

/** `[method, path]` of every /v1/runs operation whose request has a part of this kind. */
function operationsWith(part: "body" | "query"): Array<[Method, string]> {
  const found: Array<[Method, string]> = [];
  for (const [path, item] of Object.entries<any>(api.document.paths)) {
    if (!path.startsWith("/v1/runs")) continue;
    for (const [method, operation] of Object.entries<any>(item)) {
      const has =
        part === "body"
          ? operation.requestBody?.content?.["application/json"] !== undefined
          : (operation.parameters ?? []).some((p: { in: string }) => p.in === "query");
      if (has) found.push([method as Method, path]);
    }
  }
  return found;
}

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

describe("request validation", () => {
  it("every JSON body route refuses bad bodies with its documented code and changes nothing", async () => {
    const routes = operationsWith("body");
    expect(routes.map(([m, p]) => `${m} ${p}`).sort()).toEqual([
      "post /v1/runs",
      "post /v1/runs/{runId}/approvals/{requestId}",
      "post /v1/runs/{runId}/cancel",
      "post /v1/runs/{runId}/commands",
      "post /v1/runs/{runId}/recover",
      "post /v1/runs/{runId}/rerun",
      "post /v1/runs/{runId}/tokens",
    ]);
    const { run } = await createRun();
    const before = await allEvents(run.id);
    const bad: Array<[string, string, number, string]> = [
      ["not JSON", "{nope", 400, "invalid_json"],
      ["a JSON array", "[]", 422, "invalid_body"],
      ["a field no schema has", '{"surprise":true}', 422, "invalid_body"],
      [`${MAX_JSON_DEPTH + 1} levels deep`, `{"x":${nested(MAX_JSON_DEPTH)}}`, 422, "invalid_body"],
      ["over 1 MiB", `{"x":"${"y".repeat(1024 * 1024)}"}`, 413, "payload_too_large"],
    ];
    for (const [method, path] of routes) {
      for (const [what, body, status, code] of bad) {
        const params = { runId: run.id, requestId: "r-1" };
        const answer = await api.send(method, path, params, { body, headers: { "content-type": "application/json" } });
        expect([answer.status, answer.body.error.code], `${method} ${path} with ${what}`).toEqual([status, code]);
      }
    }
    expect(await allEvents(run.id)).toEqual(before);
    expect((await getRun(run.id)).status).toBe("queued");
  });

  it("every query route refuses bad parameters with 400 invalid_query", async () => {
    const routes = operationsWith("query");
    expect(routes.length).toBeGreaterThanOrEqual(3);
    const { run } = await createRun();
    for (const [method, path] of routes) {
      for (const query of ["?limit=abc", "?limit=-1", "?after=1.5", "?after=1&after=2", "?status=nope", "?offset=x"]) {
        const parameters = api.operation(method, path).parameters.map((p: { name: string }) => p.name);
        if (!parameters.includes(new URLSearchParams(query).keys().next().value)) continue;
        const answer = await api.send(method, path, { runId: run.id }, { query });
        expect([answer.status, answer.body.error.code], `${method} ${path}${query}`).toEqual([400, "invalid_query"]);
      }
    }
  });

  it("a body is read as JSON whatever its Content-Type (curl -d sends form-urlencoded); empty means {}", async () => {
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const created = await api.send("post", "/v1/runs", {}, { body: '{"input":{"prompt":"hi"}}', headers: form });
    expect(created.body.run.input).toEqual({ prompt: "hi" });
    const cancelled = await api.send("post", "/v1/runs/{runId}/cancel", { runId: created.body.run.id }, { body: "" });
    expect(cancelled.status).toBe(202);
  });

  it("a validation message names the field and the rule", async () => {
    const answer = await api.send("post", "/v1/runs", {}, { json: { timeouts: { idleMs: -5 } } });
    expect(answer.body.error.message).toMatch(/timeouts\.idleMs/);
    const query = await api.send("get", "/v1/runs", {}, { query: "?limit=500" });
    expect(query.body.error.message).toMatch(/limit/);
  });
});
