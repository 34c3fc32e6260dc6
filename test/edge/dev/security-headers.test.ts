import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECURITY_HEADERS } from "../../../src/security-headers.ts";
import { type ConsoleBrowser, closePages, launchBrowser } from "../../console/browser.ts";
import { ALPHA } from "../../support/api.ts";
import { type DevServer, startWranglerDev } from "../../support/wrangler-dev.ts";

// Every kind of response a real `wrangler dev` serves carries the security headers: the static
// assets and the console's single-page fallback (served without the worker, from `_headers`),
// and the worker's own answers (API, errors, reference page). Then both pages in chromium under
// that CSP: nothing refused.

let server: DevServer;
let browser: ConsoleBrowser;

beforeAll(async () => {
  server = await startWranglerDev();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const navigation = { "sec-fetch-mode": "navigate", accept: "text/html" };

describe("security headers on every response", () => {
  it.each<[string, string, Record<string, string>, number]>([
    ["the console page", "/", navigation, 200],
    ["the console's script", "/app.js", {}, 200],
    ["the console's stylesheet", "/app.css", {}, 200],
    ["the icon", "/favicon.svg", {}, 200],
    ["a console route (single-page fallback)", "/runs/some-run", navigation, 200],
    ["the reference page", "/docs", navigation, 200],
    ["the reference page's bundle", "/docs/swagger-ui-bundle.js", {}, 200],
    ["the reference page's script", "/docs/reference.js", {}, 200],
    ["the OpenAPI document", "/openapi.json", {}, 200],
    ["an API refusal", "/v1/runs", {}, 401],
    ["an unknown API route", "/v1/nothing-here", { authorization: `Bearer ${ALPHA}` }, 404],
    ["a stream refusal", "/v1/stream/some-stream", {}, 401],
  ])("%s (%s)", async (_name, path, headers, status) => {
    const response = await fetch(`${server.url}${path}`, { headers });
    await response.body?.cancel();
    expect(response.status).toBe(status);
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(response.headers.get(name), name).toBe(value);
  });

  it("the _headers file itself is not served", async () => {
    const response = await fetch(`${server.url}/_headers`);
    const body = await response.text();
    expect(body).not.toContain("content-security-policy");
  });
});

describe("the pages run under that policy", () => {
  it("the console and the API reference page load with nothing refused", async () => {
    const watched = await browser.open({ apiKey: ALPHA });
    const refused: string[] = [];
    watched.page.on("console", (message) => {
      if (message.text().includes("Content Security Policy")) refused.push(message.text());
    });
    await watched.page.goto(`${server.url}/`);
    await watched.page.locator("main, #app > *").first().waitFor({ timeout: 30_000 });
    await watched.page.goto(`${server.url}/docs`);
    await watched.page.locator(".opblock").first().waitFor({ timeout: 30_000 });
    expect(refused).toEqual([]);
    expect(await closePages(browser)).toEqual({ pageErrors: [], consoleErrors: [] });
  });
});
