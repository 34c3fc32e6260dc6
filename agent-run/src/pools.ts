/** Commands about runner pools: pools (connected hosts), queues, queue NAME [--max-concurrent N]. */
import type { PoolHostInfo, QueueInfo } from "../../src/protocol/index.ts";
import { EXIT, type ExitCode, stringValue, UsageError } from "./args.ts";
import type { Context } from "./context.ts";
import { relative, table } from "./format.ts";
import { ListOutput } from "./output.ts";

export async function pools(ctx: Context): Promise<ExitCode> {
  const { hosts } = (await ctx.api.call<{ hosts: PoolHostInfo[] }>("GET", "/v1/pools")).body;
  const out = new ListOutput<PoolHostInfo>(ctx);
  out.add(hosts);
  out.finish((rows) => {
    if (rows.length === 0) {
      ctx.print("no pool hosts connected (start one: npx runner-bridge pool --edge URL, with RUNNER_POOL_KEY set)");
      return;
    }
    const now = Date.now();
    ctx.print(
      table([
        ["HOST", "QUEUE", "PROFILES", "SLOTS", "CONNECTED", "RUNS"],
        ...rows.map((h) => [
          h.hostId,
          h.queue,
          h.profiles.join(","),
          `${h.slots - h.freeSlots}/${h.slots} busy`,
          relative(h.connectedAt, now),
          h.runs.map((r) => `${r.runId} (${r.state})`).join(", ") || "-",
        ]),
      ]),
    );
  });
  return EXIT.ok;
}

const queueRow = (q: QueueInfo) => [
  q.name,
  String(q.depth),
  String(q.running),
  q.maxConcurrent === null ? "none" : String(q.maxConcurrent),
  String(q.hosts),
  String(q.freeSlots),
];
const QUEUE_HEADER = ["QUEUE", "QUEUED", "RUNNING", "LIMIT", "HOSTS", "FREE SLOTS"];

export async function queues(ctx: Context): Promise<ExitCode> {
  const { queues } = (await ctx.api.call<{ queues: QueueInfo[] }>("GET", "/v1/queues")).body;
  const out = new ListOutput<QueueInfo>(ctx);
  out.add(queues);
  out.finish((rows) => {
    if (rows.length === 0) ctx.print("no queues yet (a run created with --agent makes its queue)");
    else ctx.print(table([QUEUE_HEADER, ...rows.map(queueRow)]));
  });
  return EXIT.ok;
}

export async function queue(ctx: Context): Promise<ExitCode> {
  const name = encodeURIComponent(ctx.args[0] as string);
  const limit = stringValue(ctx.values, "max-concurrent");
  let info: QueueInfo;
  if (limit === undefined) info = (await ctx.api.call<QueueInfo>("GET", `/v1/queues/${name}`)).body;
  else {
    if (limit !== "none" && !/^[1-9]\d*$/.test(limit))
      throw new UsageError(`--max-concurrent needs a whole number of at least 1, or none; got ${limit}`, ctx.command);
    const maxConcurrent = limit === "none" ? null : Number(limit);
    info = (await ctx.api.call<QueueInfo>("PUT", `/v1/queues/${name}`, { maxConcurrent })).body;
  }
  if (ctx.values.json) ctx.json(info);
  else ctx.print(table([QUEUE_HEADER, queueRow(info)]));
  return EXIT.ok;
}
