import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "./app-env.ts";
import { errorResponse } from "./respond.ts";

/** The paths that are the API's, where a miss is never the console's page. */
const API_PATH = /^\/(v1(\/.*)?|openapi\.json|docs(\/.*)?|schemas\/.*)$/;

interface PathMethods {
  pattern: RegExp;
  methods: Set<string>;
}

/** Each documented path as a pattern (`{param}` is one segment), with the methods it has. */
function routeTable(app: OpenAPIHono<AppEnv>): PathMethods[] {
  const byPath = new Map<string, Set<string>>();
  for (const definition of app.openAPIRegistry.definitions) {
    if (definition.type !== "route") continue;
    const methods = byPath.get(definition.route.path) ?? new Set<string>();
    methods.add(definition.route.method.toUpperCase());
    byPath.set(definition.route.path, methods);
  }
  return [...byPath].map(([path, methods]) => {
    const source = path
      .split(/\{\w+\}/)
      .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))
      .join("[^/]+");
    if (methods.has("GET")) methods.add("HEAD");
    return { pattern: new RegExp(`^${source}$`), methods };
  });
}

function isNavigation(request: Request): boolean {
  const mode = request.headers.get("sec-fetch-mode");
  if (mode) return mode === "navigate";
  return (request.headers.get("accept") ?? "").includes("text/html");
}

const ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

function methodNotAllowed(method: string, allow: Iterable<string>): Response {
  const list = [...allow].sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b)).join(", ");
  const response = errorResponse("method_not_allowed", `${method} is not allowed here; allowed: ${list}`);
  response.headers.set("allow", list);
  return response;
}

/**
 * What answers a request no route took. The worker runs first for every path (wrangler.toml,
 * `run_worker_first = true`), so this is the only place such answers come from:
 * - a documented path with another method: 405 with `Allow` (PATCH on a collection too);
 * - any other API path: 404 `not_found`;
 * - elsewhere GET/HEAD is the console: a static file, or index.html for a page the browser
 *   navigates to (the console routes it); any other method there is 405 with `Allow: GET, HEAD`.
 * Every one of these in the `{error:{code,message}}` shape, as the API's own refusals are.
 */
export function fallback(app: OpenAPIHono<AppEnv>) {
  let table: PathMethods[] | undefined;
  return async (c: Context<AppEnv>): Promise<Response> => {
    const { pathname } = new URL(c.req.url);
    const method = c.req.method;
    table ??= routeTable(app);
    const documented = table.find((entry) => entry.pattern.test(pathname));
    if (documented && !documented.methods.has(method)) return methodNotAllowed(method, documented.methods);
    if (API_PATH.test(pathname)) return errorResponse("not_found", "no such route");
    if (method !== "GET" && method !== "HEAD") return methodNotAllowed(method, ["GET", "HEAD"]);
    const assets = c.env.ASSETS;
    if (!assets) return errorResponse("not_found", "no such route");
    const asset = await assets.fetch(c.req.raw);
    if (asset.status !== 404) return asset;
    if (!isNavigation(c.req.raw)) return errorResponse("not_found", `no file ${pathname}`);
    // A console page (/runs/…): the single page, which routes it itself.
    return assets.fetch(new Request(new URL("/", c.req.url), { method, headers: c.req.raw.headers }));
  };
}
