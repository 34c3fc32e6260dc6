import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { api, claimTimerFires, createClaimStreamWatch, createRun, type Server, storedEvents } from "./scenarios.ts";
import { SERVE_API_KEY, SERVE_SECRETS, type ServeProcess, startServe } from "./serve-process.ts";

const tempDirs: string[] = [];
function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe("npm run serve (production bundle on plain workerd)", () => {
  const dataDir = tempDir("serve-data-");
  let server: ServeProcess | null = null;
  const target = (): Server => ({ url: (server as ServeProcess).url, apiKey: SERVE_API_KEY });

  beforeAll(async () => {
    server = await startServe({ dataDir, env: SERVE_SECRETS });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("creates a run, claims it over the runner socket, streams events, and viewers see the exact log live and on replay", async () => {
    await createClaimStreamWatch(target());
  });

  it("starts without a warning from workerd (a compatibility flag the date implies, for one)", () => {
    const output = (server as ServeProcess).output();
    expect(output).toContain("serving http");
    // Only workerd's own lines: serve's "[serve] …" notes (e.g. .dev.vars unread) are ours.
    const workerd = output
      .split("\n")
      .filter((line) => !line.startsWith("[serve]"))
      .join("\n");
    expect(workerd).not.toMatch(/compatibility flag|warning/i);
  });

  it("serves the console through the worker's ASSETS binding", async () => {
    const url = (server as ServeProcess).url;
    const page = await fetch(`${url}/`, { headers: { accept: "text/html" }, signal: AbortSignal.timeout(10_000) });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await page.text()).toBe(
      fs.readFileSync(path.resolve(import.meta.dirname, "../../console/dist/index.html"), "utf8"),
    );
    const missing = await fetch(`${url}/no-such-file.js`, { signal: AbortSignal.timeout(10_000) });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: "not_found" } });
  });

  it("answers a socket's permessage-deflate offer without the extension, on the runner and the watch socket", async () => {
    const run = await createRun(target());
    const base = (server as ServeProcess).url;
    for (const route of [`/v1/runs/${run.runId}/runner`, `/v1/runs/${run.runId}/watch?after=0`]) {
      const token = route.endsWith("runner") ? run.runnerToken : run.viewerToken;
      const answer = await upgradeHeaders(`${base}${route}`, token);
      expect(answer, route).toEqual({ status: 101, extensions: undefined });
    }
  });

  it("fires a run's claim timer from its alarm", async () => {
    await claimTimerFires(target());
  });

  it("keeps every run's log and its pending timers across a stop and a start on the same data dir", async () => {
    const finished = await createClaimStreamWatch(target());
    const before = await storedEvents(target(), finished);
    const pending = await createRun(target(), { timeouts: { claimMs: 8_000 } });

    const first = server as ServeProcess;
    await first.stop("SIGTERM");
    expect(first.output()).toContain("[serve] stopped");
    const stoppedAt = Date.now();
    server = await startServe({ dataDir, env: SERVE_SECRETS });

    expect(await storedEvents(target(), finished)).toEqual(before);
    const record = await waitFor(
      `run ${pending.runId}'s claim timer, set before the restart, to time it out after`,
      async () => {
        const res = await api(target(), "GET", `/v1/runs/${pending.runId}`);
        return res.body.status === "timed_out" ? res.body : undefined;
      },
      30_000,
      100,
    );
    expect(record.outcome).toMatchObject({ error: { code: "claim_timeout" } });
    // Fired by the second process: the first was gone by then.
    expect(Date.parse(record.finishedAt)).toBeGreaterThan(stoppedAt);
  });

  it("stops on SIGINT: workerd is gone and the port no longer answers", async () => {
    const running = server as ServeProcess;
    await running.stop("SIGINT");
    server = null;
    expect(running.output()).toContain("[serve] SIGINT: stopping workerd");
    expect(running.output()).toContain("[serve] stopped");
    await expect(fetch(`${running.url}/v1/runs`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
  });
});

describe("npm run serve secrets", () => {
  it("refuses to start without TOKEN_SECRET outside --dev, naming it", async () => {
    const refused = await startServe({ dataDir: tempDir("serve-refused-"), env: { API_KEYS: "k=t" }, noWait: true });
    const exit = await Promise.race([
      refused.exited,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error("npm run serve did not exit without TOKEN_SECRET")), 60_000),
      ),
    ]);
    expect(exit.code).not.toBe(0);
    expect(refused.output()).toContain("cannot start: TOKEN_SECRET is not set");
    expect(refused.output()).not.toContain("serving http");
  });

  it("with --dev takes secrets missing from the environment from .dev.vars", async () => {
    const dev = await startServe({ dataDir: tempDir("serve-dev-"), args: ["--dev"] });
    try {
      expect(dev.output()).toContain("API_KEYS from .dev.vars, TOKEN_SECRET from .dev.vars");
      const created = await createRun({ url: dev.url, apiKey: "dev-key-alpha" });
      expect(created.runnerToken).toMatch(/^rt1\./);
    } finally {
      await dev.stop();
    }
  });
});

describe("npm run serve with [assets]", () => {
  const dir = tempDir("serve-assets-");
  let server: ServeProcess | null = null;
  const INDEX = "<!doctype html><title>console</title>";

  beforeAll(async () => {
    const dist = path.join(dir, "dist");
    fs.mkdirSync(path.join(dist, "v1"), { recursive: true });
    fs.writeFileSync(path.join(dist, "index.html"), INDEX);
    fs.writeFileSync(path.join(dist, "app.js"), "console.log('app');");
    fs.writeFileSync(path.join(dist, "v1", "shadowed.txt"), "a file the worker's routes shadow");
    fs.writeFileSync(
      path.join(dist, "_headers"),
      "# rules\n/*\n  x-test-rule: every path\n/app.js\n  x-test-script: only here\n",
    );
    // The repo's wrangler.toml, with an absolute main and this test's [assets] in place of any other.
    const repoConfig = fs.readFileSync(path.resolve(import.meta.dirname, "../../wrangler.toml"), "utf8");
    const config = repoConfig
      .replace(/^main = .*$/m, `main = ${JSON.stringify(path.resolve(import.meta.dirname, "../../src/worker.ts"))}`)
      .replace(/^\[assets\]\n(?:[^[\n].*\n?|\n)*/m, "");
    const assets = `\n[assets]\ndirectory = "./dist"\nbinding = "ASSETS"\nrun_worker_first = ["/v1/*"]\nnot_found_handling = "single-page-application"\n`;
    fs.writeFileSync(path.join(dir, "wrangler.toml"), config + assets);
    server = await startServe({
      dataDir: path.join(dir, "data"),
      args: ["--config", path.join(dir, "wrangler.toml")],
      env: SERVE_SECRETS,
    });
  });
  afterAll(async () => {
    await server?.stop();
  });
  const get = (route: string, headers: Record<string, string> = {}) =>
    fetch((server as ServeProcess).url + route, { headers, signal: AbortSignal.timeout(10_000) });
  /** A browser navigation: node:http, since fetch() will not send a Sec-Fetch-Mode of its choosing. */
  const navigate = (route: string) =>
    new Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
      const url = `${(server as ServeProcess).url}${route}`;
      const req = http.get(url, { headers: { "sec-fetch-mode": "navigate", accept: "text/html" }, timeout: 10_000 });
      req.on("response", (res) => {
        let body = "";
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      });
      req.on("timeout", () => req.destroy(new Error(`GET ${url} timed out`)));
      req.on("error", reject);
    });

  it("serves files with their content types", async () => {
    const index = await get("/");
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await index.text()).toBe(INDEX);
    const script = await get("/app.js");
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(await script.text()).toBe("console.log('app');");
  });

  it("answers a browser navigation to an unknown path with index.html, anything else with the worker", async () => {
    const { status, body } = await navigate("/runs/some-run");
    expect({ status, body }).toEqual({ status: 200, body: INDEX });
    const missing = await get("/missing.js");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: "not_found" } });
  });

  it("applies the _headers rules to files and the single-page fallback, and never serves _headers", async () => {
    const script = await get("/app.js");
    expect([script.headers.get("x-test-rule"), script.headers.get("x-test-script")]).toEqual([
      "every path",
      "only here",
    ]);
    const index = await navigate("/runs/other-run");
    expect([index.headers["x-test-rule"], index.headers["x-test-script"]]).toEqual(["every path", undefined]);
    expect((await get("/_headers")).status).toBe(404);
    // The worker's own answers carry the security headers the worker sets.
    const refused = await get("/v1/runs");
    expect(refused.headers.get("x-content-type-options")).toBe("nosniff");
    expect(refused.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  });

  it("sends /v1/* to the worker first, WebSockets included", async () => {
    const shadowed = await get("/v1/shadowed.txt", { authorization: `Bearer ${SERVE_API_KEY}` });
    expect(shadowed.status).toBe(404);
    expect(await shadowed.json()).toMatchObject({ error: { code: "not_found" } });
    await createClaimStreamWatch({ url: (server as ServeProcess).url, apiKey: SERVE_API_KEY });
  });
});

/** The answer to a WebSocket upgrade that offers permessage-deflate: its status and headers. */
function upgradeHeaders(url: string, token: string): Promise<{ status: number; extensions: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, {
      timeout: 10_000,
      headers: {
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
        "sec-websocket-extensions": "permessage-deflate; client_max_window_bits",
        authorization: `Bearer ${token}`,
      },
    });
    req.on("upgrade", (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, extensions: res.headers["sec-websocket-extensions"] });
    });
    req.on("response", (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, extensions: res.headers["sec-websocket-extensions"] });
    });
    req.on("timeout", () => req.destroy(new Error(`no answer to the upgrade of ${url} in 10 s`)));
    req.on("error", reject);
  });
}
