import { OpenAPIHono, type RouteConfig, type RouteHandler } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import type { z } from "zod";
import { REQUEST_EXAMPLES } from "../openapi/examples.ts";
import { type ErrorCode, ERROR_STATUS, errorResponseSchema } from "../protocol/index.ts";
import type { AppEnv } from "./app-env.ts";
import { jsonBody, validationHook } from "./validate.ts";

/** A router whose routes are documented as they are declared; validation failures answer in our error shape. */
export function apiRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}

/**
 * Who may call a route: the middleware that checks it (and puts what it found on the context),
 * the security requirements the document shows, and the refusals it can answer with.
 */
export interface Access<M extends MiddlewareHandler<any, any, any>> {
  middleware: M;
  security: Array<Record<string, string[]>>;
  refusals: readonly ErrorCode[];
}

/** An API route: an OpenAPI route definition plus who may call it and what else it can refuse. */
export type ApiRoute = Omit<RouteConfig, "middleware" | "security" | "hide"> & {
  access: Access<MiddlewareHandler<any, any, any>>;
  /** Refusals of the route itself, besides its access's (documented with their statuses). */
  refusals: readonly ErrorCode[];
};

/** What the handler's types are computed from: the path, request and responses, and the access middleware's env. */
type Wired<R extends ApiRoute> = {
  method: R["method"];
  path: R["path"];
  responses: R["responses"];
  middleware: R["access"]["middleware"];
} & (R extends { request: infer Q extends RouteConfig["request"] } ? { request: Q } : unknown);

/**
 * Declares one route: documented in the OpenAPI document, and served behind its access
 * middleware, its path and query validators, its JSON body validator, then `handler`. The
 * handler's JSON answers are type-checked against the route's response schemas; its refusals
 * leave through `respond` (src/routes/respond.ts).
 *
 * Adding a documented route is one call of this in the router it belongs to (see runs.ts):
 * method, path (`{param}` style), access, request schemas, responses, refusals, handler.
 */
export function apiRoute<const R extends ApiRoute>(
  app: OpenAPIHono<AppEnv>,
  route: R,
  handler: RouteHandler<Wired<R>>,
): void {
  const definition = document(app, route);
  // The body is read by our own validator (size, depth, any Content-Type), not the library's.
  const { body, ...request } = definition.request ?? {};
  const bodySchema = (body?.content["application/json"] as { schema?: unknown } | undefined)?.schema;
  const middleware: MiddlewareHandler[] = [route.access.middleware];
  if (bodySchema) middleware.push(jsonBody(bodySchema as z.ZodType));
  app.openapi({ ...definition, request, middleware, hide: true }, handler as never);
}

/**
 * Declares a route whose bodies are raw bytes (Durable Streams): documented like `apiRoute`,
 * served by `handler` behind the access middleware, if any, with no validators (the handler
 * parses its own headers and body). `honoPath` when Hono's pattern is not the document's path
 * (`/*` for a stream path of several segments).
 */
export function rawRoute(
  app: OpenAPIHono<AppEnv>,
  route: RawRoute & { method: Exclude<RawRoute["method"], "head"> },
  handler: (c: Context<any>) => Response | Promise<Response>,
): void {
  const { honoPath, ...documented } = route;
  document(app, documented);
  const path = honoPath ?? route.path.replaceAll(/\{(\w+)\}/g, ":$1");
  const middleware = route.access.middleware ? [route.access.middleware] : [];
  app.on(route.method.toUpperCase(), [path], ...middleware, handler);
}

/** Documents a HEAD route: Hono answers HEAD with the path's GET handler, which checks `c.req.method`. */
export function headRoute(app: OpenAPIHono<AppEnv>, route: RawRoute & { method: "head" }): void {
  const { honoPath: _, ...documented } = route;
  document(app, documented);
}

export type RawRoute = Omit<ApiRoute, "access"> & {
  access: Omit<Access<MiddlewareHandler<any, any, any>>, "middleware"> & {
    middleware?: MiddlewareHandler<any, any, any>;
  };
  honoPath?: string;
};

/** Registers a route in the document: its security, and every refusal as a response. */
function document(app: OpenAPIHono<AppEnv>, route: ApiRoute | RawRoute): RouteConfig {
  const { access, refusals, ...rest } = route;
  const definition = rest as RouteConfig;
  // A path parameter its schema refuses answers invalid_path (validate.ts): every route with one says so.
  const path: readonly ErrorCode[] = definition.request?.params ? ["invalid_path"] : [];
  app.openAPIRegistry.registerPath({
    ...definition,
    security: access.security,
    responses: {
      ...definition.responses,
      ...refusalResponses([...access.refusals, ...path, ...refusals, "internal"]),
    },
  });
  return definition;
}

/** One documented response per status: the error shape, with the codes this route gives at that status. */
function refusalResponses(codes: readonly ErrorCode[]): RouteConfig["responses"] {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: RouteConfig["responses"] = {};
  for (const [status, atStatus] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[status] = {
      description: atStatus.join(", "),
      content: { "application/json": { schema: errorResponseSchema(atStatus) } },
    };
  }
  return responses;
}

/** A JSON response with its schema. */
export function jsonResponse<S extends z.ZodType>(schema: S, description: string) {
  return { description, content: { "application/json": { schema } } };
}

/**
 * A JSON request body with its schema and, when it has one, its realistic example
 * (src/openapi/examples.ts); `required: false` when an empty body means `{}`.
 */
export function jsonRequest<S extends z.ZodType>(schema: S, required = true) {
  const example = REQUEST_EXAMPLES.get(schema);
  return { required, content: { "application/json": { schema, ...(example === undefined ? {} : { example }) } } };
}
