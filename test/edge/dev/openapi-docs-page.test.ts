import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleBrowser, closePages, launchBrowser } from "../../console/browser.ts";
import { type DevServer, startWranglerDev } from "../../support/wrangler-dev.ts";

// The API reference page in real chromium against a real `wrangler dev`, with every request
// that leaves the server's origin blocked: it must render the whole document all the same.

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

describe("the API reference page", () => {
  it("renders every documented operation from same-origin files only (offline)", async () => {
    const { page } = await browser.open();
    const elsewhere: string[] = [];
    const loaded: string[] = [];
    await page.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith(server.url)) {
        loaded.push(new URL(url).pathname);
        return route.continue();
      }
      elsewhere.push(url);
      return route.abort();
    });
    await page.goto(`${server.url}/docs`);
    await page.locator(".opblock").first().waitFor({ timeout: 30_000 });

    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
      webhooks: Record<string, Record<string, unknown>>;
    };
    // The routes, and the messages sent to webhook endpoints (the document's `webhooks`).
    const operations = [...Object.values(document.paths), ...Object.values(document.webhooks)].reduce(
      (count, item) => count + Object.keys(item).length,
      0,
    );
    expect(await page.locator(".opblock").count()).toBe(operations);
    await expect(page.locator(".opblock-summary-description", { hasText: "Create a run" }).count()).resolves.toBe(1);
    expect(elsewhere).toEqual([]);
    expect([...new Set(loaded)].sort()).toEqual([
      "/docs",
      "/docs/reference.js",
      "/docs/swagger-ui-bundle.js",
      "/docs/swagger-ui.css",
      "/favicon.svg",
      "/openapi.json",
    ]);
    expect(await closePages(browser)).toEqual({ pageErrors: [], consoleErrors: [] });
  });
});
