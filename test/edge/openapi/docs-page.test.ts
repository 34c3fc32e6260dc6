import { describe, expect, it } from "vitest";
import { call } from "../helpers.ts";

// The API reference page: served by the worker at /docs, Swagger UI's script and stylesheet from
// the static assets and the page's own script from the worker, nothing from anywhere else (it
// works offline) and no inline script (the CSP allows none).

describe("the API reference page", () => {
  it("is Swagger UI over /openapi.json, loading only same-origin files", async () => {
    const response = await call("/docs", { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    const page = await response.text();
    const loaded = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map(([, url]) => url);
    expect(loaded.sort()).toEqual(["/docs/reference.js", "/docs/swagger-ui-bundle.js", "/docs/swagger-ui.css"]);
    expect(page).not.toMatch(/https?:\/\//);
    expect(page).not.toMatch(/<script>|<script [^>]*>[^<]/);
    expect(response.headers.get("content-security-policy")).toContain("script-src 'self'");
    const script = await (await call("/docs/reference.js", { key: null })).text();
    expect(script).toContain('url: "/openapi.json"');
    expect(script).toContain("validatorUrl: null");
  });

  it.each([
    ["/docs/swagger-ui-bundle.js", /javascript/, "SwaggerUIBundle"],
    ["/docs/swagger-ui.css", /^text\/css/, ".swagger-ui"],
  ])("serves %s from the static assets", async (path, type, marker) => {
    const response = await call(path, { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(type);
    const text = await response.text();
    expect(text.length).toBeGreaterThan(100_000);
    expect(text).toContain(marker);
  });

  it("answers 404 for any other file under /docs/, not the console's page", async () => {
    const response = await call("/docs/index.html", { key: null });
    expect(response.status).toBe(404);
    expect((await response.json<{ error: { code: string } }>()).error.code).toBe("not_found");
  });
});
