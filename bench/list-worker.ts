/**
 * Bench only (`npm run bench -- --only list`): the TenantIndex on plain workerd, seeded in bulk
 * inside the object (one call per batch, not per run) and listed over HTTP as GET /v1/runs asks
 * it; `?peer=scan` answers a tag filter the way an index without tag tables would, with a LIKE
 * scan over every row's tags, for the ratio.
 */
import { ListRunsQuery, metaFilters } from "../src/protocol/index.ts";
import type { IndexEntry } from "../src/run/index-sync.ts";
import { TenantIndex } from "../src/objects/tenant-index.ts";

export class BenchIndex extends TenantIndex {
  seed(entries: IndexEntry[]): number {
    for (const entry of entries) this.upsert(entry);
    return entries.length;
  }

  /** The peer: tags matched by LIKE on each row's JSON, walking every run newest first. */
  scanList(tags: string[], status: string | undefined, limit: number): number {
    const where = ["removed = 0", ...tags.map(() => "tags LIKE ?")];
    const params: (string | number)[] = tags.map((tag) => `%${JSON.stringify(tag)}%`);
    if (status) {
      where.push("status = ?");
      params.push(status);
    }
    return this.ctx.storage.sql
      .exec(
        `SELECT * FROM runs WHERE ${where.join(" AND ")} ORDER BY created_at DESC, run_id DESC LIMIT ?`,
        ...params,
        limit + 1,
      )
      .toArray().length;
  }
}

interface Env {
  INDEX: DurableObjectNamespace<BenchIndex>;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const index = env.INDEX.get(env.INDEX.idFromName("bench-tenant"));
    if (url.pathname === "/ping") return new Response("pong");
    if (url.pathname === "/seed" && request.method === "POST") {
      const entries = (await request.json()) as IndexEntry[];
      return Response.json({ seeded: await index.seed(entries) });
    }
    if (url.pathname === "/list") {
      const queries = Object.fromEntries([...url.searchParams.keys()].map((k) => [k, url.searchParams.getAll(k)]));
      const single = Object.fromEntries(Object.entries(queries).map(([k, v]) => [k, v.length === 1 ? v[0] : v]));
      const query = ListRunsQuery.safeParse(single);
      const meta = metaFilters(queries);
      if (!query.success || !meta.ok) return Response.json({ error: "bad query" }, { status: 400 });
      const { tag, ...rest } = query.data;
      if (url.searchParams.get("peer") === "scan") {
        return Response.json({ count: await index.scanList(tag, rest.status, rest.limit), nextCursor: null });
      }
      const page = await index.list({ ...rest, tags: tag, meta: meta.value });
      if (!page.ok) return Response.json({ error: page.message }, { status: 400 });
      return Response.json({ count: page.value.runs.length, nextCursor: page.value.nextCursor });
    }
    return new Response("not found", { status: 404 });
  },
};
