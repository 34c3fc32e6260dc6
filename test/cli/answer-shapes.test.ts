import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { main } from "../../agent-run/src/cli.ts";
import { cli } from "./harness/cli.ts";
import { DocumentedStub, type Shape } from "./harness/documented-stub.ts";
import { useEdge } from "./harness/edge.ts";

// Every agent-run command against every answer the API documents for the routes it calls: each
// success shape (every optional field present, then absent; nullable ones null; each enum value and
// union branch in turn), each documented refusal code of each error status, and for `watch` each
// documented viewer frame. The answers come from the OpenAPI document the real edge serves, so a
// route that grows a field or a refusal is tried here the day it is documented.

const edge = useEdge();
let stub: DocumentedStub;

const WATCH_LIMITS = ["--give-up-ms", "300", "--check-ms", "100"];

/** Each command, as an operator would type it (text and --json). */
const INVOCATIONS: string[][] = [
  ["create"],
  ["create", "--json"],
  ["create", "--agent", "demo", "--prompt", "hello", "--queue", "default"],
  ["list"],
  ["list", "--all"],
  ["list", "--output", "json"],
  ["list", "--json"],
  ["get", "r-1"],
  ["get", "r-1", "--json"],
  ["events", "r-1"],
  ["events", "r-1", "--output", "json"],
  ["logs", "r-1"],
  ["logs", "r-1", "-f", ...WATCH_LIMITS],
  ["watch", "r-1", ...WATCH_LIMITS],
  ["watch", "r-1", "--json", ...WATCH_LIMITS],
  ["send", "r-1", "hello"],
  ["send", "r-1", "hello", "--json"],
  ["interrupt", "r-1"],
  ["cancel", "r-1"],
  ["cancel", "r-1", "--json"],
  ["approve", "r-1", "req-1"],
  ["deny", "r-1", "req-1", "--reason", "no"],
  ["approve", "r-1", "req-1", "--json"],
  ["recover", "r-1", "resume"],
  ["recover", "r-1", "fail", "--json"],
  ["token", "r-1", "--role", "viewer"],
  ["token", "r-1", "--role", "runner", "--json"],
  ["delete", "r-1"],
  ["delete", "r-1", "--json"],
  ["pools"],
  ["pools", "--json"],
  ["pools", "--output", "json"],
  ["queues"],
  ["queues", "--output", "ndjson"],
  ["queue", "default"],
  ["queue", "default", "--max-concurrent", "3"],
  ["queue", "default", "--max-concurrent", "none", "--json"],
  ["webhooks", "list"],
  ["webhooks", "list", "--json"],
  ["webhooks", "add", "https://hooks.example.com/agent-run", "--events", "run.succeeded,run.waiting"],
  ["webhooks", "add", "https://hooks.example.com/agent-run", "--events", "run.failed", "--json"],
  ["webhooks", "rm", "wh1"],
  ["webhooks", "deliveries", "wh1"],
  ["webhooks", "deliveries", "wh1", "--json"],
  ["webhooks", "ping", "wh1"],
];

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** agent-run's own main, in this process (thousands of runs; a sample also runs as real processes below). */
async function runInProcess(url: string, args: string[]): Promise<Outcome> {
  let stdout = "";
  let stderr = "";
  const out = process.stdout.write;
  const err = process.stderr.write;
  process.stdout.write = ((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    const code = await main([...args, "--url", url, "--key", "dev-key-alpha"]);
    return { code, stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

const ERROR_LINE = /^agent-run: [a-z0-9_]+: [^\n]+\n$/;

/** What is wrong with one command's outcome for one answer shape; empty when it behaved. */
function judge(args: string[], shape: Shape | undefined, outcome: Outcome): string[] {
  const problems: string[] = [];
  const follows = args[0] === "watch" || args.includes("-f");
  const output = args[args.indexOf("--output") + 1];
  const json = args.includes("--json") || (args.includes("--output") && output !== "table");
  if (![0, 1, 2, 3, 4].includes(outcome.code)) problems.push(`exit ${outcome.code}`);
  if (outcome.code === 4) {
    // A follower may have said "reconnecting" first; its last line is the one error line.
    const last = follows ? (outcome.stderr.match(/[^\n]*\n$/)?.[0] ?? "") : outcome.stderr;
    if (!ERROR_LINE.test(last)) problems.push(`exit 4 without one error line: ${JSON.stringify(outcome.stderr)}`);
  } else if (!follows && outcome.stderr !== "") {
    problems.push(`stderr on exit ${outcome.code}: ${JSON.stringify(outcome.stderr)}`);
  }
  const succeeds = shape?.success ?? true;
  if (!follows && succeeds && outcome.code !== 0) problems.push(`a documented success gave exit ${outcome.code}`);
  if (!succeeds && !follows && outcome.code !== 4) problems.push(`a documented refusal gave exit ${outcome.code}`);
  // A refused WebSocket upgrade shows no status to the client (WHATWG WebSocket), so a follower
  // can only say it could not reconnect; the codes of plain requests must be named.
  const refusedUpgrade = follows && shape?.name.includes("/watch ");
  if (!succeeds && !refusedUpgrade && shape?.answer.kind === "http" && outcome.code === 4) {
    const code = (shape.answer.body as { error?: { code?: string } }).error?.code;
    if (code && !outcome.stderr.includes(`: ${code}: `)) problems.push(`the error line does not name ${code}`);
  }
  // An empty list printed as JSON lines is no lines; as text it should say it is empty.
  if (succeeds && !follows && !json && outcome.stdout === "") problems.push("a success printed nothing");
  if (json && outcome.code === 0) {
    for (const line of outcome.stdout.split("\n").filter(Boolean)) {
      try {
        JSON.parse(line);
      } catch {
        problems.push(`JSON output printed a line that is not JSON: ${line.slice(0, 80)}`);
      }
    }
  }
  return problems;
}

beforeAll(async () => {
  const [document, frames] = await Promise.all(
    ["/openapi.json", "/schemas/viewer-frames.json"].map(async (path) => (await fetch(edge.url + path)).json()),
  );
  stub = new DocumentedStub(document, frames);
  await stub.start();
});

afterAll(async () => {
  await stub?.stop();
});

describe("every command against every documented answer", () => {
  test.each(INVOCATIONS.map((args) => [args.join(" "), args]))(
    "agent-run %s",
    async (_name, args) => {
      stub.answerWith(undefined);
      const first = await runInProcess(stub.url, args);
      const called = [...new Set(stub.seen.map((seen) => seen.operation))];
      const failures: string[] = [];
      const record = (label: string, outcome: Outcome, shape: Shape | undefined) => {
        const problems = [...judge(args, shape, outcome), ...stub.seen.flatMap((seen) => seen.problems)];
        if (problems.length > 0) {
          failures.push(`${label}: ${problems.join("; ")} · stdout ${JSON.stringify(outcome.stdout.slice(0, 200))}`);
        }
      };
      record("the first documented success of every route", first, undefined);
      expect(called.length, "the command called no route").toBeGreaterThan(0);
      let tried = 0;
      for (const operation of called) {
        for (const shape of stub.shapes(operation)) {
          stub.answerWith(operation, shape.answer);
          record(shape.name, await runInProcess(stub.url, args), shape);
          tried++;
        }
      }
      expect(failures, `${failures.length} of ${tried} answer shapes went wrong`).toEqual([]);
    },
    120_000,
  );
});

describe("the same, as real processes", () => {
  // The in-process table above calls main(); this checks the installed bin maps its results to
  // the same exit statuses, for one success and one refusal per command.
  test("a success and a refusal of each command give exit 0 and 4 with one stderr line", async () => {
    const failures: string[] = [];
    for (const args of INVOCATIONS.filter((a) => !a.includes("-f") && a[0] !== "watch")) {
      stub.answerWith(undefined);
      const ok = await cli(stub.url, args);
      if (ok.code !== 0 || ok.stderr !== "") failures.push(`${args.join(" ")}: exit ${ok.code} ${ok.stderr}`);
      const operation = stub.seen[0]?.operation ?? "";
      const refusal = stub.shapes(operation).find((shape) => !shape.success && shape.answer.kind === "http");
      if (!refusal) continue;
      stub.answerWith(operation, refusal.answer);
      const refused = await cli(stub.url, args);
      if (refused.code !== 4 || !ERROR_LINE.test(refused.stderr)) {
        failures.push(`${args.join(" ")} (${refusal.name}): exit ${refused.code} ${JSON.stringify(refused.stderr)}`);
      }
    }
    expect(failures).toEqual([]);
  }, 240_000);
});
