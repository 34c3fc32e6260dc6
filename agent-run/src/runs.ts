/** Commands about runs as records: create, list, get, events, token, delete. */
import fs from "node:fs";
import {
  type ApprovalRecord,
  type ApprovalSummary,
  CreateRunBody,
  EVENTS_PAGE_MAX,
  RUNS_PAGE_MAX,
  type RunEvent,
  type RunRecord,
  RunStatus,
  type Timeouts,
  TokenBody,
} from "../../src/protocol/index.ts";
import { EXIT, type ExitCode, intValue, invalidUsage, stringValue, UsageError } from "./args.ts";
import { runPath } from "./client.ts";
import type { Context } from "./context.ts";
import { consoleLink, fields, relative, table } from "./format.ts";
import { ListOutput } from "./output.ts";
import { costText } from "./usage-text.ts";
import { eventLine, showRun } from "./show.ts";

interface Created {
  run: RunRecord;
  runnerToken: string;
  viewerToken: string;
}

interface RunListing {
  runId: string;
  status: string;
  createdAt: string;
  updatedAt: string;
  /** The run's usage totals (absent from a server older than usage). */
  usage?: { inputTokens: number; outputTokens: number; costUsd: number | null };
}

const TIMEOUT_NAMES = ["claimMs", "heartbeatMs", "takeoverMs", "approvalMs", "idleMs", "runMs", "recoverMs"] as const;

export async function create(ctx: Context): Promise<ExitCode> {
  const body = createBody(ctx);
  const { status, body: created } = await ctx.api.call<Created>("POST", "/v1/runs", body);
  const link = consoleLink(ctx.api.url, created.run.id, created.viewerToken);
  if (ctx.values.json) {
    ctx.json({ ...created, consoleUrl: link });
    return EXIT.ok;
  }
  const id = created.run.id;
  const pooled = typeof body.agent === "string";
  ctx.print(
    status === 201
      ? `created run ${ctx.paint.bold(id)} (${created.run.status})`
      : `run ${ctx.paint.bold(id)} already exists with this body (${created.run.status}); fresh tokens:`,
  );
  ctx.print(
    fields([
      ["runner token", created.runnerToken],
      ["viewer token", created.viewerToken],
      ["console", `${link}  (read-only)`],
      pooled
        ? [
            "runs on",
            `a pool host serving ${body.agent} on queue ${stringValue(ctx.values, "queue") ?? "default"} (agent-run pools)`,
          ]
        : [
            "run the agent",
            `RUNNER_BRIDGE_TOKEN=<runner token> npx runner-bridge run --edge ${ctx.api.url} --run ${id} -- CMD...`,
          ],
      ["watch", `npx agent-run watch ${id}`],
    ]),
  );
  return EXIT.ok;
}

function createBody(ctx: Context): CreateRunBody {
  const body: Record<string, unknown> = {};
  const id = stringValue(ctx.values, "id");
  if (id !== undefined) body.runId = id;
  const input = stringValue(ctx.values, "input");
  if (input !== undefined) body.input = readJson(input, "--input", ctx.command);
  // A profile name: the pool hosts define what it runs; the prompt is the agent's first message.
  const agent = stringValue(ctx.values, "agent");
  if (agent !== undefined) body.agent = agent;
  const prompt = stringValue(ctx.values, "prompt");
  if (prompt !== undefined) {
    const given = body.input ?? {};
    if (typeof given !== "object" || given === null || Array.isArray(given))
      throw new UsageError("--prompt needs --input to be a JSON object", ctx.command);
    body.input = { ...given, prompt };
  }
  const queue = stringValue(ctx.values, "queue");
  if (queue !== undefined) body.queue = queue;
  const tags = (ctx.values.tag as string[] | undefined) ?? [];
  if (tags.length > 0) body.tags = tags;
  const budget: Record<string, number> = {};
  for (const [flag, field] of [
    ["max-tokens", "maxTokens"],
    ["max-cost", "maxCostUsd"],
  ] as const) {
    const text = stringValue(ctx.values, flag);
    if (text === undefined) continue;
    const value = Number(text);
    if (text.trim() === "" || !Number.isFinite(value)) throw new UsageError(`--${flag} takes a number`, ctx.command);
    budget[field] = value;
  }
  if (Object.keys(budget).length > 0) body.budget = budget;
  const timeouts: Partial<Timeouts> = {};
  for (const entry of (ctx.values.timeout as string[] | undefined) ?? []) {
    const match = /^([A-Za-z]+)=(\d+)$/.exec(entry);
    const name = match?.[1]?.endsWith("Ms") ? match[1] : `${match?.[1]}Ms`;
    if (!match || !(TIMEOUT_NAMES as readonly string[]).includes(name)) {
      throw new UsageError(
        `--timeout ${entry}: expected NAME=MS with NAME one of ${TIMEOUT_NAMES.map((n) => n.slice(0, -2)).join(", ")}`,
        ctx.command,
      );
    }
    timeouts[name as keyof Timeouts] = Number(match[2]);
  }
  if (Object.keys(timeouts).length > 0) body.timeouts = timeouts;
  const parsed = CreateRunBody.safeParse(body);
  if (!parsed.success) throw invalidUsage(parsed.error, ctx.command);
  return parsed.data;
}

/** JSON text, or `@file` (`@-` for stdin) holding JSON. */
function readJson(text: string, flag: string, command: string): unknown {
  let source = text;
  if (text.startsWith("@")) {
    const file = text.slice(1);
    try {
      source = fs.readFileSync(file === "-" ? 0 : file, "utf8");
    } catch (err) {
      throw new UsageError(`${flag} ${text}: ${(err as Error).message}`, command);
    }
  }
  try {
    return JSON.parse(source);
  } catch {
    throw new UsageError(`${flag} must be JSON or @file, e.g. ${flag} '{"prompt":"say hi"}'`, command);
  }
}

export async function list(ctx: Context): Promise<ExitCode> {
  const status = stringValue(ctx.values, "status");
  if (status !== undefined && !RunStatus.safeParse(status).success) {
    throw new UsageError(`--status must be one of ${RunStatus.options.join(", ")}`, ctx.command);
  }
  const limit = intValue(ctx.values, "limit", ctx.command, 1);
  if (limit !== undefined && limit > RUNS_PAGE_MAX)
    throw new UsageError(`--limit is at most ${RUNS_PAGE_MAX}`, ctx.command);
  const filters = listFilters(ctx);
  const out = new ListOutput<RunListing>(ctx);
  let cursor: string | null = null;
  let more = false;
  do {
    const query = new URLSearchParams(filters);
    if (status) query.set("status", status);
    if (limit !== undefined) query.set("limit", String(limit));
    if (cursor) query.set("cursor", cursor);
    const page = (await ctx.api.call<{ runs: RunListing[]; nextCursor: string | null }>("GET", `/v1/runs?${query}`))
      .body;
    out.add(page.runs);
    cursor = page.nextCursor;
    more = cursor !== null && ctx.values.all !== true;
  } while (cursor !== null && ctx.values.all === true);
  out.finish((rows) => {
    if (rows.length === 0) return ctx.print(status || filters.size > 0 ? "no runs match" : "no runs");
    const now = Date.now();
    ctx.print(
      table([
        ["RUN", "STATUS", "CREATED", "UPDATED", "TOKENS", "COST"],
        ...rows.map((r) => [
          r.runId,
          r.status,
          relative(r.createdAt, now),
          relative(r.updatedAt, now),
          r.usage ? (r.usage.inputTokens + r.usage.outputTokens).toLocaleString("en-US") : "—",
          costText(r.usage?.costUsd),
        ]),
      ]),
    );
    if (more) ctx.print(ctx.paint.dim("more runs: agent-run list --all"));
  });
  return EXIT.ok;
}

export async function get(ctx: Context): Promise<ExitCode> {
  const run = await ctx.api.getRun(ctx.args[0] as string);
  if (ctx.values.json) ctx.json(run);
  else ctx.print(showRun(await withFullRequests(ctx, run), ctx.paint));
  return EXIT.ok;
}

/** The record lists a large approval request without its data: the text view fetches it. */
async function withFullRequests(ctx: Context, run: RunRecord): Promise<RunRecord> {
  const full = async (approval: ApprovalSummary): Promise<ApprovalSummary> => {
    if (!approval.truncated) return approval;
    const path = runPath(run.id, `/approvals/${encodeURIComponent(approval.requestId)}`);
    const { data } = (await ctx.api.call<ApprovalRecord>("GET", path)).body;
    return { ...approval, data, truncated: false };
  };
  const pendingApprovals: ApprovalSummary[] = [];
  for (const approval of run.pendingApprovals) pendingApprovals.push(await full(approval));
  return { ...run, pendingApprovals };
}

export async function events(ctx: Context): Promise<ExitCode> {
  const runId = ctx.args[0] as string;
  const out = new ListOutput<RunEvent>(ctx);
  const from = intValue(ctx.values, "after", ctx.command) ?? 0;
  let after = from;
  let printed = 0;
  for (;;) {
    const page = (
      await ctx.api.call<{ events: RunEvent[]; nextAfter: number; hasMore: boolean }>(
        "GET",
        runPath(runId, `/events?after=${after}&limit=${EVENTS_PAGE_MAX}`),
      )
    ).body;
    // A table prints each page as it comes: a long log never waits for its last page.
    if (out.format === "table") for (const event of page.events) ctx.print(eventLine(event, ctx.paint));
    else out.add(page.events);
    printed += page.events.length;
    if (!page.hasMore) break;
    after = page.nextAfter;
  }
  // A table that printed nothing says so, as `list` does; json and ndjson stay machine-shaped.
  out.finish(() => {
    if (printed === 0) ctx.print(from > 0 ? `no events after seq ${from}` : "no events yet");
  });
  return EXIT.ok;
}

export async function token(ctx: Context): Promise<ExitCode> {
  const runId = ctx.args[0] as string;
  const role = stringValue(ctx.values, "role");
  if (role === undefined) throw new UsageError("token needs --role viewer or --role runner", ctx.command);
  const ttlMs = intValue(ctx.values, "ttl", ctx.command, 1);
  const raw: Record<string, unknown> = { role };
  if (ctx.values.interact === true) raw.interact = true;
  if (ttlMs !== undefined) raw.ttlMs = ttlMs;
  const parsed = TokenBody.safeParse(raw);
  if (!parsed.success) throw invalidUsage(parsed.error, ctx.command);
  const minted = (
    await ctx.api.call<{ token: string; role: string; interact: boolean }>(
      "POST",
      runPath(runId, "/tokens"),
      parsed.data,
    )
  ).body;
  const link = minted.role === "viewer" ? consoleLink(ctx.api.url, runId, minted.token) : null;
  if (ctx.values.json) {
    ctx.json(link ? { ...minted, consoleUrl: link } : minted);
    return EXIT.ok;
  }
  ctx.print(minted.token);
  if (link) {
    const can = minted.interact ? "can send commands and approve" : "read-only";
    ctx.print(`${ctx.paint.dim("console")}  ${link}  ${ctx.paint.dim(`(${can})`)}`);
  } else {
    ctx.print(
      // In the environment, the token stays out of the bridge's process-list entry.
      ctx.paint.dim(
        `RUNNER_BRIDGE_TOKEN=${minted.token} npx runner-bridge run --edge ${ctx.api.url} --run ${runId} -- CMD...`,
      ),
    );
  }
  return EXIT.ok;
}

export async function remove(ctx: Context): Promise<ExitCode> {
  const runId = ctx.args[0] as string;
  const result = (await ctx.api.call<unknown>("DELETE", runPath(runId))).body;
  if (ctx.values.json) ctx.json(result);
  else ctx.print(`deleted run ${runId}; reading it now answers 410 gone`);
  return EXIT.ok;
}

/** --agent, --tag, --meta KEY=VALUE and --created-after/--created-before as GET /v1/runs filters. */
function listFilters(ctx: Context): URLSearchParams {
  const query = new URLSearchParams();
  const agent = stringValue(ctx.values, "agent");
  if (agent !== undefined) query.set("agent", agent);
  for (const tag of (ctx.values.tag as string[] | undefined) ?? []) query.append("tag", tag);
  for (const pair of (ctx.values.meta as string[] | undefined) ?? []) {
    const at = pair.indexOf("=");
    if (at <= 0) throw new UsageError(`--meta takes KEY=VALUE, e.g. --meta repo=acme/web (got ${pair})`, ctx.command);
    query.append(`meta.${pair.slice(0, at)}`, pair.slice(at + 1));
  }
  for (const [flag, name] of [
    ["created-after", "createdAfter"],
    ["created-before", "createdBefore"],
  ] as const) {
    const text = stringValue(ctx.values, flag);
    if (text === undefined) continue;
    const ms = Date.parse(text);
    if (Number.isNaN(ms))
      throw new UsageError(`--${flag} takes a time, e.g. 2026-12-01 or 2026-12-01T09:00:00Z`, ctx.command);
    query.set(name, new Date(ms).toISOString());
  }
  return query;
}
