import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";

/**
 * Debian's chromium, driven by playwright-core. Never a browser download: a machine without
 * chromium on PATH fails here with the command that installs it.
 */
export function chromiumPath(): string {
  try {
    return execFileSync("sh", ["-c", "command -v chromium"], { encoding: "utf8" }).trim();
  } catch {
    throw new Error("chromium is not on PATH; install it with `apt-get install -y chromium` (.ci/run does)");
  }
}

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };
/**
 * Where the tests save their screenshots: test-output/screenshots (ignored by git), or the
 * committed docs/screenshots when UPDATE_SCREENSHOTS=1, so a test run leaves the tree clean.
 */
export const SCREENSHOTS = path.resolve(
  import.meta.dirname,
  process.env.UPDATE_SCREENSHOTS === "1" ? "../../docs/screenshots" : "../../test-output/screenshots",
);

/** A page with every uncaught error and console error it produced. */
export interface WatchedPage {
  page: Page;
  pageErrors: Error[];
  consoleErrors: string[];
}

export interface ConsoleBrowser {
  context: BrowserContext;
  /** A new tab; with `apiKey`, signed in the way the sign-in form leaves it (sessionStorage). */
  open(options?: { apiKey?: string; viewport?: { width: number; height: number } }): Promise<WatchedPage>;
  /** Pages opened since the last call. */
  drain(): WatchedPage[];
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<ConsoleBrowser> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "console-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: DESKTOP,
    acceptDownloads: true,
  });
  let opened: WatchedPage[] = [];
  return {
    context,
    async open(options = {}) {
      const page = await context.newPage();
      const watched: WatchedPage = { page, pageErrors: [], consoleErrors: [] };
      page.on("pageerror", (error) => watched.pageErrors.push(error));
      page.on("console", (message) => {
        if (message.type() === "error") watched.consoleErrors.push(message.text());
      });
      if (options.viewport) await page.setViewportSize(options.viewport);
      if (options.apiKey) {
        await page.addInitScript(`sessionStorage.setItem("agent-run-edge.apiKey", ${JSON.stringify(options.apiKey)});`);
      }
      opened.push(watched);
      return watched;
    },
    drain() {
      const pages = opened;
      opened = [];
      return pages;
    },
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Closes the pages a test opened and returns what went wrong in them. */
export async function closePages(browser: ConsoleBrowser): Promise<{ pageErrors: string[]; consoleErrors: string[] }> {
  const pageErrors: string[] = [];
  const consoleErrors: string[] = [];
  for (const watched of browser.drain()) {
    pageErrors.push(...watched.pageErrors.map((error) => `${watched.page.url()}: ${error.stack ?? error.message}`));
    consoleErrors.push(...watched.consoleErrors.map((text) => `${watched.page.url()}: ${text}`));
    await watched.page.close().catch(() => undefined);
  }
  return { pageErrors, consoleErrors };
}

export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: options.fullPage ?? false });
}
