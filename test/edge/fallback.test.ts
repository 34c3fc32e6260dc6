import { describe, expect, it } from "vitest";
import { REQUEST_EXAMPLES } from "../../src/openapi/examples.ts";
import { call, json, uniqueRunId } from "./helpers.ts";

/** An answer in the API's one refusal shape, with its status and code. */
async function refusal(response: Response): Promise<{ status: number; code: string; allow: string | null }> {
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  const body = (await response.json()) as { error: { code: string; message: string } };
  expect(typeof body.error.message).toBe("string");
  return { status: response.status, code: body.error.code, allow: response.headers.get("allow") };
}

describe("answers outside the routes", () => {
  it("another method on a documented path is 405 with Allow, collections included", async () => {
    expect(await refusal(await call("/v1/runs", { method: "PATCH" }))).toEqual({
      status: 405,
      code: "method_not_allowed",
      allow: "GET, HEAD, POST",
    });
    const run = `/v1/runs/${uniqueRunId()}`;
    expect(await refusal(await call(run, { method: "PUT" }))).toMatchObject({
      status: 405,
      allow: "GET, HEAD, DELETE",
    });
    expect(await refusal(await call("/openapi.json", { method: "POST" }))).toMatchObject({
      status: 405,
      allow: "GET, HEAD",
    });
  });

  it("an unknown API path is 404 not_found, whatever the method; elsewhere only GET and HEAD are allowed", async () => {
    expect(await refusal(await call("/v1", { method: "PATCH" }))).toMatchObject({ status: 404, code: "not_found" });
    expect(await refusal(await call("/v1/nothing", { method: "DELETE" }))).toMatchObject({ status: 404 });
    const elsewhere: [string, string][] = [
      ["DELETE", "/v2/runs"],
      ["OPTIONS", "/"],
      ["POST", "/runs/r-1"],
      ["PATCH", "/app.js"],
    ];
    for (const [method, path] of elsewhere) {
      expect(await refusal(await call(path, { method })), `${method} ${path}`).toEqual({
        status: 405,
        code: "method_not_allowed",
        allow: "GET, HEAD",
      });
    }
  });

  it("GET elsewhere is the console: its files, its page for any navigation, and a JSON 404 for a missing file", async () => {
    const page = await call("/", { key: null, headers: { accept: "text/html" } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("<!doctype html>");
    const deep = await call("/runs/r-1", { key: null, headers: { "sec-fetch-mode": "navigate" } });
    expect([deep.status, await deep.text()]).toEqual([200, html]);
    const script = await call("/app.js", { key: null });
    expect([script.status, script.headers.get("content-type")]).toEqual([200, expect.stringMatching(/javascript/)]);
    await script.body?.cancel();
    expect(await refusal(await call("/missing.js", { key: null }))).toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("bad requests", () => {
  it("a run id that is not one is invalid_path, not invalid_query", async () => {
    for (const path of ["/v1/runs/no%20spaces", "/v1/runs/-dash/events", "/v1/runs/x%2Fy/events"]) {
      expect(await refusal(await call(path)), path).toMatchObject({ status: 400, code: "invalid_path" });
    }
  });

  it("a body that is not valid UTF-8 is refused 400 and creates nothing", async () => {
    const runId = uniqueRunId("utf8");
    const bytes = new Uint8Array([
      ...new TextEncoder().encode(`{"runId":"${runId}","input":"`),
      0xff,
      0xfe,
      0x22,
      0x7d,
    ]);
    const answer = await call("/v1/runs", {
      method: "POST",
      body: bytes,
      headers: { "content-type": "application/json" },
    });
    expect(await refusal(answer)).toMatchObject({ status: 400, code: "invalid_json" });
    expect((await call(`/v1/runs/${runId}`)).status).toBe(404);
  });
});

describe("the OpenAPI examples", () => {
  it("every request example is a body its route accepts", () => {
    expect(REQUEST_EXAMPLES.size).toBeGreaterThanOrEqual(6);
    for (const [schema, example] of REQUEST_EXAMPLES) expect(schema.safeParse(example).success).toBe(true);
  });

  it("the document carries them, and Try it out on POST /v1/runs creates a run that lasts", async () => {
    const document = await json(await call("/openapi.json", { key: null }), 200);
    const example = document.paths["/v1/runs"].post.requestBody.content["application/json"].example;
    expect(example).toBeDefined();
    const created = await json(await call("/v1/runs", { method: "POST", json: example }), 201);
    expect(created.run.status).toBe("queued");
    for (const [name, ms] of Object.entries<number>(created.run.timeouts)) {
      expect(ms, name).toBeGreaterThanOrEqual(30_000);
    }
    expect(document.components.schemas.Timeouts.examples[0].claimMs).toBeGreaterThanOrEqual(60_000);
  });
});
