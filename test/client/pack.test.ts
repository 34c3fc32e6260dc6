import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO } from "../support/wrangler-dev.ts";

// The SDK as a user installs it: `npm pack` of client/, unpacked into a fresh node_modules, imported
// by a plain Node 22 process (no TypeScript, no workspace) that makes a call and reads a refusal.

const NODE = path.join(REPO, "node_modules/.bin/node");
let dir = "";
let server: http.Server;
let url = "";

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-pack-"));
  server = http.createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    if (req.url === "/v1/runs/r-1" && req.headers.authorization === "Bearer k") {
      return void res.end(JSON.stringify({ id: "r-1", status: "running", lastSeq: 3 }));
    }
    res.statusCode = 404;
    res.end(JSON.stringify({ error: { code: "not_found", message: "no run r-2" } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("npm pack", () => {
  it("packs a tarball whose entry a plain Node process imports and calls with", async () => {
    const out = execFileSync("npm", ["pack", "--pack-destination", dir, "--silent"], {
      cwd: path.join(REPO, "client"),
      encoding: "utf8",
      timeout: 120_000,
    });
    const tarball = path.join(dir, out.trim().split("\n").at(-1) ?? "");
    expect(fs.existsSync(tarball), `the tarball ${tarball}`).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(REPO, "client/package.json"), "utf8")).exports["."]).toBe(
      "./src/index.ts",
    );
    const installed = path.join(dir, "node_modules/@agent-run/client");
    fs.mkdirSync(installed, { recursive: true });
    execFileSync("tar", ["xzf", tarball, "-C", installed, "--strip-components=1"]);
    const listing = execFileSync("tar", ["tzf", tarball], { encoding: "utf8" });
    const sources = listing.split("\n").filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"));
    expect(sources, "TypeScript sources in the tarball").toEqual([]);
    expect(listing).toContain("package/dist/types/client/src/index.d.ts");
    fs.symlinkSync(path.join(REPO, "node_modules/zod"), path.join(dir, "node_modules/zod"));
    const script = path.join(dir, "use.mjs");
    fs.writeFileSync(
      script,
      `import { createClient, ApiError, OPERATIONS } from "@agent-run/client";
import { Transcript } from "@agent-run/client/transcript";
const edge = createClient({ url: process.argv[2], key: "k", attempts: 1 });
const run = await edge.getRun("r-1");
const refused = await edge.getRun("r-2").catch((err) => err);
console.log(JSON.stringify({ run, refused: { isApiError: refused instanceof ApiError, code: refused.code, status: refused.status, message: refused.message }, operations: Object.keys(OPERATIONS).length, fold: typeof Transcript }));
`,
    );
    // Not execFileSync: the server answering the child lives in this process's event loop.
    const { stdout } = await promisify(execFile)(NODE, [script, url], { cwd: dir, encoding: "utf8", timeout: 30_000 });
    const result = JSON.parse(stdout);
    expect(result.run).toEqual({ id: "r-1", status: "running", lastSeq: 3 });
    expect(result.refused).toEqual({ isApiError: true, code: "not_found", status: 404, message: "no run r-2" });
    expect(result.operations).toBeGreaterThan(30);
    expect(result.fold).toBe("function");

    // The same install, type-checked as a TypeScript consumer would: the shipped .d.ts files must
    // resolve whole (a type naming a module the tarball lacks is an error, not a silent `any`).
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ type: "module" }));
    fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify(CONSUMER_TSCONFIG));
    fs.writeFileSync(path.join(dir, "consumer.ts"), CONSUMER);
    expect(typeCheck(dir), "tsc on a strict consumer of the packed types").toEqual({ ok: true, errors: [] });
    // And the check can fail: with the protocol's declarations gone, the SDK's own types no longer resolve.
    const protocolTypes = path.join(installed, "dist/types/src/protocol");
    expect(fs.existsSync(protocolTypes), protocolTypes).toBe(true);
    fs.renameSync(protocolTypes, `${protocolTypes}.hidden`);
    const broken = typeCheck(dir);
    fs.renameSync(`${protocolTypes}.hidden`, protocolTypes);
    expect(broken.ok).toBe(false);
    expect(broken.errors.some((line) => line.includes("TS2307") && line.includes("src/protocol"))).toBe(true);
  });
});

/** A consumer's strict settings: Node's ESM resolution through the package's exports, no skipLibCheck. */
const CONSUMER_TSCONFIG = {
  compilerOptions: {
    target: "es2023",
    module: "nodenext",
    moduleResolution: "nodenext",
    lib: ["es2023", "dom"],
    types: [],
    strict: true,
    noEmit: true,
    skipLibCheck: false,
  },
  files: ["consumer.ts"],
};

/** Uses the SDK's types; each @ts-expect-error fails the check if the type it probes became `any`. */
const CONSUMER = `import { AguiEventType, ApiError, createClient, type RunEvent, type RunStatus, type WatchUpdate } from "@agent-run/client";
import { Transcript } from "@agent-run/client/transcript";

const edge = createClient({ url: "http://127.0.0.1:9", key: "k", attempts: 1 });
export async function statusOf(runId: string): Promise<RunStatus> {
  return (await edge.getRun(runId)).status;
}
export async function seqs(runId: string): Promise<number[]> {
  const out: number[] = [];
  for await (const update of edge.watch(runId, { after: 0 })) if (update.type === "event") out.push(update.event.seq);
  return out;
}
export const rows: number = new Transcript([] as RunEvent[]).rows.length;
export const start: "TEXT_MESSAGE_START" = AguiEventType.TEXT_MESSAGE_START;
export const refused = (err: unknown): boolean => err instanceof ApiError && err.status === 404;
// @ts-expect-error not a run status
export const bogus: RunStatus = "exploded";
// @ts-expect-error a watch update has no such type
export const odd: WatchUpdate = { type: "nope" };
// @ts-expect-error getRun takes a run id
void edge.getRun(42);
`;

/** tsc (the repository's) on the consumer in `dir`: its error lines. */
function typeCheck(dir: string): { ok: boolean; errors: string[] } {
  const tsc = path.join(REPO, "node_modules/typescript/bin/tsc");
  try {
    execFileSync(NODE, [tsc, "-p", dir], { cwd: dir, encoding: "utf8", timeout: 120_000 });
    return { ok: true, errors: [] };
  } catch (err) {
    const out = String((err as { stdout?: string }).stdout ?? err);
    return { ok: false, errors: out.split("\n").filter((line) => line.includes("error TS")) };
  }
}
