import { describe, expect, it } from "vitest";
import { call } from "../helpers.ts";

// The API reference page: served by the worker at /docs, its script and stylesheet from the
// static assets, nothing from anywhere else (it works offline).

describe("the API reference page", () => {
  it("is Swagger UI over /openapi.json, loading only same-origin files", async () => {
    const response = await call("/docs", { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    const page = await response.text();
    expect(page).toContain('url: "/openapi.json"');
    expect(page).toContain("validatorUrl: null");
    const loaded = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map(([, url]) => url);
    expect(loaded.sort()).toEqual(["/docs/swagger-ui-bundle.js", "/docs/swagger-ui.css"]);
    expect(page).not.toMatch(/https?:\/\//);
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
