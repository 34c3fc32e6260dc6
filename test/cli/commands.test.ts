import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, test } from "vitest";
import type { RunEvent, RunRecord } from "../../src/protocol/index.ts";
import { cli, ERROR_LINE, lines, ndjson } from "./harness/cli.ts";
import { useEdge } from "./harness/edge.ts";

const edge = useEdge();
const run = (args: string[], options?: Parameters<typeof cli>[2]) => cli(edge.url, args, options);

/** The record minus what a heartbeat moves. */
const stable = (r: RunRecord) => ({ ...r, runner: { ...r.runner, leaseExpiresAt: null } });

describe("create", () => {
  test("prints the id, both tokens and a read-only console link, with the flags in the stored run", async () => {
    const out = await run([
      ...["create", "--id", "c-1", "--input", '{"files":["a.ts"]}', "--agent", "codex", "--prompt", "hi"],
      ...["--timeout", "claim=60000", "--timeout", "idleMs=120000"],
    ]);
    expect(out).toMatchObject({ code: 0, stderr: "" });
    const [first, runner, viewer, consoleLine, runsOn] = lines(out.stdout);
    expect(first).toBe("created run c-1 (queued)");
    const runnerToken = /^runner token +(rt1\.\S+)$/.exec(runner ?? "")?.[1];
    const viewerToken = /^viewer token +(rt1\.\S+)$/.exec(viewer ?? "")?.[1];
    expect(consoleLine).toBe(`console       ${edge.url}/runs/c-1#token=${viewerToken}  (read-only)`);
    expect(runsOn).toBe("runs on       a pool host serving codex on queue default (agent-run pools)");

    // --agent names a pool profile; --prompt joins --input as its prompt.
    const stored = await edge.api.getRun("c-1");
    expect(stored).toMatchObject({ input: { files: ["a.ts"], prompt: "hi" }, agent: "codex", queue: "default" });
    expect(stored.timeouts).toMatchObject({ claimMs: 60_000, idleMs: 120_000, heartbeatMs: 30_000 });
    const asViewer = await fetch(`${edge.url}/v1/runs/c-1`, { headers: { authorization: `Bearer ${viewerToken}` } });
    expect(asViewer.status).toBe(200);
    const preflight = await fetch(`${edge.url}/v1/runs/c-1/runner`, {
      headers: { authorization: `Bearer ${runnerToken}` },
    });
    expect(preflight.status).toBe(200);
  });

  test("--json is the server's answer plus consoleUrl, on one line; --input @file; a repeat is safe", async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "cli-input-")), "input.json");
    fs.writeFileSync(file, JSON.stringify({ prompt: "from a file", files: ["a.ts"] }));
    const out = await run(["create", "--id", "c-2", "--input", `@${file}`, "--json"]);
    expect(out.code).toBe(0);
    const [answer, ...rest] = ndjson(out.stdout);
    expect(rest).toEqual([]);
    expect(answer).toMatchObject({
      run: { id: "c-2", status: "queued", input: { prompt: "from a file", files: ["a.ts"] } },
    });
    expect(answer?.consoleUrl).toBe(`${edge.url}/runs/c-2#token=${answer?.viewerToken}`);

    const again = await run(["create", "--id", "c-2", "--input", `@${file}`]);
    expect(again).toMatchObject({ code: 0, stderr: "" });
    expect(lines(again.stdout)[0]).toBe("run c-2 already exists with this body (queued); fresh tokens:");

    const different = await run(["create", "--id", "c-2", "--input", '{"prompt":"other"}']);
    expect(different).toEqual({
      code: 4,
      stdout: "",
      stderr: "agent-run: conflict: run c-2 already exists with a different body\n",
    });
  });
});

describe("list", () => {
  test("a table newest first; --limit pages, --all follows nextCursor, --status filters, --json is one run a line", async () => {
    for (const id of ["l-1", "l-2", "l-3"]) await edge.api.createRun({ runId: id, metadata: { list: true } });
    await edge.api.request("POST", "/v1/runs/l-2/cancel", {});
    const everything: unknown[] = [];
    let cursor = "";
    for (;;) {
      const page = await edge.api.request("GET", `/v1/runs?limit=200${cursor}`);
      everything.push(...page.body.runs);
      if (!page.body.nextCursor) break;
      cursor = `&cursor=${page.body.nextCursor}`;
    }

    const all = await run(["list", "--all", "--limit", "2", "--json"]);
    expect(all.code).toBe(0);
    expect(ndjson(all.stdout)).toEqual(everything);

    const firstPage = await run(["list", "--limit", "2", "--json"]);
    expect(ndjson(firstPage.stdout)).toEqual(everything.slice(0, 2));

    const table = await run(["list", "--limit", "2"]);
    const [header, row1, row2, more, ...extra] = lines(table.stdout);
    expect(header).toMatch(/^RUN +STATUS +CREATED +UPDATED +TOKENS +COST$/);
    expect(row1).toMatch(/^l-3 +queued +\d+s ago +\d+s ago +0 +—$/);
    expect(row2).toMatch(/^l-2 +cancelled +\d+s ago +\d+s ago +0 +—$/);
    expect(more).toBe("more runs: agent-run list --all");
    expect(extra).toEqual([]);

    const cancelled = await run(["list", "--status", "cancelled", "--all", "--json"]);
    const statuses = ndjson<{ runId: string; status: string }>(cancelled.stdout);
    expect(statuses.map((r) => r.status)).toEqual(statuses.map(() => "cancelled"));
    expect(statuses.map((r) => r.runId)).toContain("l-2");
  });
});

describe("get", () => {
  test("the run record, readable, with pending approvals and how to decide them; --json is the record", async () => {
    const { run: created, runner } = await edge.claimedRun({ runId: "g-1", agent: { name: "codex" } });
    await runner.emit([
      { type: "approval.requested", data: { requestId: "r-1", toolName: "shell", input: { cmd: "ls" } } },
    ]);
    const out = await run(["get", created.id]);
    expect(out.code).toBe(0);
    const text = out.stdout;
    expect(text).toMatch(/^run +g-1$/m);
    expect(text).toMatch(/^status +waiting \(for an approval\)$/m);
    expect(text).toMatch(/^events +3 \(1 from the runner\)$/m);
    expect(text).toMatch(/^runner +test-runner · connected · lease until \S+$/m);
    expect(text).toMatch(/^agent +\{"name":"codex"\}$/m);
    expect(text).toMatch(
      /^timeouts +claim 15m · heartbeat 30s · takeover 5m · approval 1d · idle 1h · run 7d · recover 1h$/m,
    );
    expect(text).toMatch(/^generation +1$/m);
    expect(text).toMatch(/^checkpoint +none$/m);
    expect(text).toContain("pending approvals:\n  r-1  asked at seq 3 · expires in 23h 59m");
    expect(text).toContain("agent-run approve g-1 r-1   |   agent-run deny g-1 r-1");

    const json = await run(["get", created.id, "--json"]);
    const [record, ...rest] = ndjson<RunRecord>(json.stdout);
    expect(rest).toEqual([]);
    expect(stable(record as RunRecord)).toEqual(stable(await edge.api.getRun(created.id)));
  });

  test("a pending approval too large for the record is fetched from its own route and shown", async () => {
    const { run: created, runner } = await edge.claimedRun({ runId: "g-2" });
    const patch = `--- a/x\n+++ b/x\n${"+ line\n".repeat(2000)}`;
    await runner.emit([{ type: "approval.requested", data: { requestId: "r-big", toolName: "apply_patch", patch } }]);
    const record = await edge.api.getRun(created.id);
    expect(record.pendingApprovals).toMatchObject([{ requestId: "r-big", truncated: true, data: null }]);
    const out = await run(["get", created.id]);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(
      /^ {2}r-big {2}asked at seq 3 · expires in \S+ \S+ {2}\{"toolName":"apply_patch","patch":"--- a\/x/m,
    );
  });
});

describe("events", () => {
  test("pages through the whole log: --json is the stored log, line for line; --after starts later", async () => {
    const { run: created, runner } = await edge.claimedRun({ runId: "e-1" });
    const batch = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        type: "TEXT_MESSAGE_CONTENT",
        data: { messageId: "m", delta: `d${from + i}` },
      }));
    await runner.emit(batch(0, 500));
    await runner.emit(batch(500, 120));
    const stored = await edge.api.events(created.id);
    expect(stored.length).toBe(622);

    const out = await run(["events", created.id, "--json"]);
    expect(out.code).toBe(0);
    expect(ndjson<RunEvent>(out.stdout)).toEqual(stored);

    const later = await run(["events", created.id, "--after", "600", "--json"]);
    expect(ndjson<RunEvent>(later.stdout)).toEqual(stored.slice(600));

    const readable = lines((await run(["events", created.id, "--after", "620"])).stdout);
    expect(readable).toEqual([
      expect.stringMatching(
        /^ {3}621 {2}\d\d:\d\d:\d\d {2}runner {3}TEXT_MESSAGE_CONTENT {2}\{"messageId":"m","delta":"d618"\}$/,
      ),
      expect.stringMatching(
        /^ {3}622 {2}\d\d:\d\d:\d\d {2}runner {3}TEXT_MESSAGE_CONTENT {2}\{"messageId":"m","delta":"d619"\}$/,
      ),
    ]);
  });
});

describe("send, interrupt, cancel", () => {
  test("each prints a generated command id; --command-id makes a retry safe; another body is a conflict", async () => {
    const { run: created, runner } = await edge.claimedRun({ runId: "s-1" });
    const sent = await run(["send", created.id, "also update the changelog"]);
    expect(sent.code).toBe(0);
    const id = /^input for s-1 accepted · command (cli-[0-9a-f-]{36}) · delivered$/.exec(sent.stdout.trim())?.[1];
    expect(id).toBeDefined();
    expect(await runner.command()).toMatchObject({ commandId: id, kind: "input", text: "also update the changelog" });

    const retry = await run(["send", created.id, "also update the changelog", "--command-id", id as string]);
    expect(retry.stdout.trim()).toBe(
      `input for s-1 was already accepted as command ${id} · delivered (not sent twice)`,
    );
    const conflict = await run(["send", created.id, "something else", "--command-id", id as string]);
    expect(conflict.code).toBe(4);
    expect(conflict.stderr).toMatch(ERROR_LINE);
    expect(conflict.stderr).toMatch(/^agent-run: conflict: /);

    const interrupt = await run(["interrupt", created.id, "--command-id", "int-1", "--json"]);
    expect(ndjson(interrupt.stdout)).toEqual([
      {
        created: true,
        command: expect.objectContaining({ commandId: "int-1", type: "interrupt", state: "delivered" }),
      },
    ]);
    expect(await runner.command()).toMatchObject({ commandId: "int-1", kind: "interrupt" });

    const cancel = await run(["cancel", created.id, "--reason", "enough", "--command-id", "stop-1"]);
    expect(cancel.stdout.trim()).toBe(
      "cancel for s-1 accepted · command stop-1 · delivered · run running; the runner has 30 s to stop",
    );
    expect(await runner.command()).toMatchObject({ commandId: "stop-1", kind: "cancel" });

    const queued = (await edge.api.events(created.id)).filter((e) => e.type === "command.queued");
    expect(queued.map((e) => (e.data as { commandId: string }).commandId)).toEqual([id, "int-1", "stop-1"]);
  });

  test("cancel of a run nobody runs ends it at once", async () => {
    await edge.api.createRun({ runId: "s-2" });
    const out = await run(["cancel", "s-2", "--command-id", "stop-2"]);
    expect(out).toEqual({ code: 0, stdout: "run s-2 is cancelled · command stop-2\n", stderr: "" });
    expect((await edge.api.getRun("s-2")).status).toBe("cancelled");
  });
});

describe("approve, deny", () => {
  test("decide pending approvals; a repeat changes nothing; a stale decision says what is pending", async () => {
    const { run: created, runner } = await edge.claimedRun({ runId: "a-1" });
    await runner.emit([
      { type: "approval.requested", data: { requestId: "r-1" } },
      { type: "approval.requested", data: { requestId: "r-2" } },
    ]);
    expect(await run(["approve", created.id, "r-1", "--reason", "looks fine"])).toEqual({
      code: 0,
      stdout: "r-1 on a-1: approved; the agent gets the decision\n",
      stderr: "",
    });
    expect(await runner.command()).toMatchObject({ kind: "approval", requestId: "r-1", decision: "approve" });
    expect((await run(["approve", created.id, "r-1", "--reason", "looks fine"])).stdout).toBe(
      "r-1 on a-1 was already approved; nothing changed\n",
    );

    const stale = await run(["deny", created.id, "r-1"]);
    expect(stale.code).toBe(4);
    expect(stale.stderr).toMatch(ERROR_LINE);
    expect(stale.stderr).toBe(
      "agent-run: stale: approval r-1 is already approved (a decision only lands on a pending request: it may be unknown, expired, or decided the other way already); pending on a-1 now: r-2\n",
    );

    const denied = await run(["deny", created.id, "r-2", "--json"]);
    expect(ndjson(denied.stdout)).toEqual([
      { created: true, approval: expect.objectContaining({ requestId: "r-2", state: "denied", decision: "deny" }) },
    ]);
    const unknown = await run(["approve", created.id, "r-9"]);
    expect(unknown.stderr).toMatch(/^agent-run: stale: no approval request r-9 .*; nothing is pending on a-1\n$/);
  });
});

describe("token", () => {
  test("a viewer token with its console link, an interacting one, and a runner token", async () => {
    await edge.api.createRun({ runId: "t-1" });
    const viewer = await run(["token", "t-1", "--role", "viewer"]);
    const [token, link, ...rest] = lines(viewer.stdout);
    expect(rest).toEqual([]);
    expect(link).toBe(`console  ${edge.url}/runs/t-1#token=${token}  (read-only)`);
    const as = (t: string, method = "GET", route = "/v1/runs/t-1", body?: unknown) =>
      fetch(edge.url + route, {
        method,
        headers: { authorization: `Bearer ${t}` },
        body: body ? JSON.stringify(body) : null,
      });
    expect((await as(token as string)).status).toBe(200);
    const input = { commandId: "x-1", type: "input", text: "hi" };
    expect((await as(token as string, "POST", "/v1/runs/t-1/commands", input)).status).toBe(403);

    const operator = await run(["token", "t-1", "--role", "viewer", "--interact", "--ttl", "60000"]);
    const [opToken, opLink] = lines(operator.stdout);
    expect(opLink).toBe(`console  ${edge.url}/runs/t-1#token=${opToken}  (can send commands and approve)`);
    expect((await as(opToken as string, "POST", "/v1/runs/t-1/commands", input)).status).toBe(201);

    const runner = await run(["token", "t-1", "--role", "runner", "--json"]);
    const [minted] = ndjson<{ token: string; role: string; interact: boolean }>(runner.stdout);
    expect(minted).toEqual({
      token: expect.stringMatching(/^rt1\./),
      tokenId: expect.any(String),
      role: "runner",
      interact: false,
      expiresAt: expect.any(String),
    });
    expect((await as(minted?.token as string, "GET", "/v1/runs/t-1/runner")).status).toBe(200);
  });
});

describe("delete", () => {
  test("deletes a finished run, after which reading it is gone; a live run is refused", async () => {
    await edge.api.createRun({ runId: "d-1" });
    const live = await run(["delete", "d-1"]);
    expect(live).toEqual({
      code: 4,
      stdout: "",
      stderr: "agent-run: not_terminal: run is queued; only finished runs can be deleted\n",
    });
    await edge.api.request("POST", "/v1/runs/d-1/cancel", {});
    expect(await run(["delete", "d-1"])).toEqual({
      code: 0,
      stdout: "deleted run d-1; reading it now answers 410 gone\n",
      stderr: "",
    });
    const gone = await run(["get", "d-1"]);
    expect(gone.code).toBe(4);
    expect(gone.stderr).toMatch(/^agent-run: gone: .* \(it had cancelled at \S+\)\n$/);
  });
});
