import { validate } from "@readme/openapi-parser";
import { inspectRoutes } from "hono/dev";
import { describe, expect, it } from "vitest";
import protocolMarkdown from "../../../docs/PROTOCOL.md?raw";
import streamsMarkdown from "../../../docs/STREAMS.md?raw";
import worker from "../../../src/worker.ts";
import { call, createRun } from "../helpers.ts";
import { fetchDocument, type Method } from "./documented.ts";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch"] as const;

/** Every `METHOD /path` the document describes. */
function documentedOperations(document: any): string[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => (item as Record<string, unknown>)[method]).map((m) => `${m.toUpperCase()} ${path}`),
  );
}

/** Hono's `:param` and trailing `*` (a stream path of any depth) in the document's `{param}` form. */
const asDocumentPath = (path: string) => path.replaceAll(/:(\w+)/g, "{$1}").replace(/\/\*$/, "/{path}");

/** What the app serves: every route that is not middleware, by method, in the document's path form. */
function registeredRoutes() {
  const routes = inspectRoutes(worker.app).filter((route) => !route.isMiddleware);
  const unique = (list: string[]) => [...new Set(list)].sort();
  return {
    byMethod: unique(routes.filter((r) => r.method !== "ALL").map((r) => `${r.method} ${asDocumentPath(r.path)}`)),
    /** `all()` routes: the 405 answer to every method a path does not have. */
    fallbacks: unique(routes.filter((r) => r.method === "ALL").map((r) => asDocumentPath(r.path))),
  };
}

describe("the OpenAPI document", () => {
  it("is served at /openapi.json without credentials and is a valid OpenAPI 3.1 document", async () => {
    const document = await fetchDocument();
    expect(document.openapi).toBe("3.1.0");
    const result = await validate(structuredClone(document));
    if (!result.valid) throw new Error(`invalid OpenAPI document: ${JSON.stringify(result.errors, null, 2)}`);
    expect(result).toMatchObject({ valid: true, specification: "OpenAPI", warnings: [] });
  });

  it("documents exactly the routes the app registers, nothing missing either way", async () => {
    const documented = documentedOperations(await fetchDocument());
    const { byMethod, fallbacks } = registeredRoutes();
    // Hono answers HEAD with the GET route, so a documented HEAD needs a GET, not a route of its own.
    const heads = documented.filter((op) => op.startsWith("HEAD "));
    expect(documented.filter((op) => !op.startsWith("HEAD ")).sort()).toEqual(byMethod);
    for (const head of heads) expect(byMethod).toContain(head.replace("HEAD ", "GET "));
    expect(byMethod.length).toBeGreaterThan(15);
    // The method-not-allowed fallbacks sit on documented paths (and answer 405: run-stream and stream tests).
    expect(fallbacks).toEqual(["/v1/runs/{runId}/stream", "/v1/stream/{path}"]);
  });

  it("has every HTTP route docs/PROTOCOL.md and docs/STREAMS.md name", async () => {
    const documented = new Set(documentedOperations(await fetchDocument()));
    const named = (matches: IterableIterator<RegExpMatchArray>) =>
      [...matches].flatMap(([, methods, path]) =>
        (methods as string).split("|").map((method) => `${method} ${asDocumentPath(path as string)}`),
      );
    // Headings such as "### `POST /v1/runs` (API key)" and "## Runner WebSocket — `GET /v1/runs/:runId/runner`".
    const protocol = named(protocolMarkdown.matchAll(/^#{2,3} .*?`([A-Z|]+) (\/[^`?\s]*)[^`]*`/gm));
    // Rows of the operations table such as "| `PUT /v1/stream/{path}` | create …".
    const streams = named(streamsMarkdown.matchAll(/^\| `([A-Z]+) (\/v1\/stream\/\{path\})[^`]*` \|/gm));
    expect(protocol.length).toBeGreaterThan(10);
    expect(streams).toHaveLength(5);
    for (const operation of [...protocol, ...streams])
      expect(documented, `the docs name ${operation}`).toContain(operation);
  });

  it("takes ?token= exactly on the routes whose security lists queryToken", async () => {
    const document = await fetchDocument();
    const { run, viewerToken, runnerToken } = await createRun();
    const checked: string[] = [];
    for (const [path, item] of Object.entries<any>(document.paths)) {
      if (!path.startsWith("/v1/runs/{runId}")) continue;
      for (const method of METHODS) {
        const operation = item[method];
        if (!operation || method === "head") continue;
        const takesQueryToken = operation.security.some((s: object) => "queryToken" in s);
        // The runner routes take only runner tokens; every other run route reads with a viewer token.
        const token = path.endsWith("/runner") ? runnerToken : viewerToken;
        const url = path.replace("{runId}", run.id).replace("{requestId}", "r-1");
        const response = await call(`${url}?token=${encodeURIComponent(token)}`, {
          method: method.toUpperCase(),
          key: null,
        });
        await response.body?.cancel();
        checked.push(`${method.toUpperCase()} ${path} ${response.status}`);
        if (takesQueryToken) expect(response.status, `${method} ${path}`).not.toBe(401);
        else expect(response.status, `${method} ${path}`).toBe(401);
      }
    }
    expect(checked.length).toBeGreaterThan(8);
  });

  it.each<[Method, string]>([
    ["get", "/schemas/runner-frames.json"],
    ["get", "/schemas/viewer-frames.json"],
  ])("%s %s serves a JSON Schema (draft 2020-12) without credentials", async (_method, path) => {
    const response = await call(path, { key: null });
    expect(response.status).toBe(200);
    const schema = await response.json<any>();
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    expect(schema.anyOf.length).toBe(2);
  });
});
