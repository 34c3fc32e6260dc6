import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { apiRouter, rawRoute } from "../routes/api-route.ts";
import type { AppEnv } from "../routes/app-env.ts";
import { openApiDocument } from "./document.ts";
import { errorResponse } from "../routes/respond.ts";
import { DOCS_ASSETS, DOCS_PAGE, DOCS_SCRIPT } from "./docs-page.ts";
import { FRAME_SCHEMAS } from "./frame-schemas.ts";

const open = { security: [], refusals: [] };
const tags = ["reference"];
const json = (description: string) => ({
  description,
  content: { "application/json": { schema: z.record(z.string(), z.unknown()) } },
});

/** Generated on first use, then kept for the isolate's life. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
}

/**
 * The API's own reference: the OpenAPI document of `app`, the frames' JSON Schemas and the
 * reference page. Served without credentials, like any public API description.
 */
export function referenceRoutes(app: OpenAPIHono<AppEnv>): OpenAPIHono<AppEnv> {
  const reference = apiRouter();
  const document = once(() => openApiDocument(app));
  rawRoute(
    reference,
    {
      method: "get",
      path: "/openapi.json",
      tags,
      summary: "This OpenAPI 3.1 document",
      access: open,
      responses: { 200: json("The document") },
      refusals: [],
    },
    (c) => c.json(document()),
  );
  for (const [name, schema] of Object.entries(FRAME_SCHEMAS)) {
    const generated = once(schema);
    rawRoute(
      reference,
      {
        method: "get",
        path: `/schemas/${name}`,
        tags,
        summary: `JSON Schema of the ${name.replace("-frames.json", "")} WebSocket's frames, both directions`,
        access: open,
        responses: { 200: json("A JSON Schema, draft 2020-12") },
        refusals: [],
      },
      (c) => c.json(generated()),
    );
  }
  rawRoute(
    reference,
    {
      method: "get",
      path: "/docs",
      tags,
      summary: "The API reference page (Swagger UI over this document; works offline)",
      access: open,
      responses: { 200: { description: "The page", content: { "text/html": { schema: { type: "string" } } } } },
      refusals: [],
    },
    (c) => c.html(DOCS_PAGE),
  );
  rawRoute(
    reference,
    {
      method: "get",
      path: "/docs/{path}",
      honoPath: "/docs/*",
      tags,
      summary: "The reference page's scripts and stylesheet",
      access: open,
      request: { params: z.object({ path: z.string() }) },
      responses: { 200: { description: "The file", content: { "*/*": { schema: {} } } } },
      refusals: ["not_found"],
    },
    (c) => {
      // Only the page's own files: any other path would get the console's single-page fallback.
      const name = c.req.path.slice("/docs/".length);
      if (name === "reference.js")
        return c.body(DOCS_SCRIPT, 200, { "content-type": "text/javascript; charset=utf-8" });
      const known = (DOCS_ASSETS as readonly string[]).includes(name);
      if (!known || !c.env.ASSETS) return errorResponse("not_found", "no such file of the API reference");
      return c.env.ASSETS.fetch(c.req.raw);
    },
  );
  return reference;
}
