import { tenantIndex } from "../objects/tenant-index-shards.ts";
import { fail, UsageQuery, UsageReport } from "../protocol/index.ts";
import { API_KEY } from "./access.ts";
import { apiRoute, apiRouter, jsonResponse } from "./api-route.ts";
import { unwrap } from "./respond.ts";

const DAY_MS = 24 * 60 * 60 * 1000;
/** Longest range one report sums, in days. */
export const USAGE_RANGE_MAX_DAYS = 366;

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The tenant's provider usage (tokens, stated cost) by day, agent or tag. */
export const usage = apiRouter();

apiRoute(
  usage,
  {
    method: "get",
    path: "/",
    tags: ["usage"],
    summary: "The tenant's usage by day, agent or tag",
    description: `Sums the \`agent.usage\` reports of the tenant's runs made on the UTC days \`from\`..\`to\` (both included; at most ${USAGE_RANGE_MAX_DAYS} days). Purged runs still count.`,
    access: API_KEY,
    request: { query: UsageQuery },
    responses: { 200: jsonResponse(UsageReport, "Usage sums per group, and over all") },
    refusals: ["invalid_query"],
  },
  async (c) => {
    const query = c.req.valid("query");
    const to = query.to ?? dayOf(Date.now());
    const from = query.from ?? dayOf(Date.parse(to) - 30 * DAY_MS);
    const days = (Date.parse(to) - Date.parse(from)) / DAY_MS;
    if (!Number.isFinite(days) || days < 0) unwrap(fail("invalid_query", "from must be a day no later than to"));
    if (days >= USAGE_RANGE_MAX_DAYS) unwrap(fail("invalid_query", `at most ${USAGE_RANGE_MAX_DAYS} days at once`));
    const report = await tenantIndex(c.env, c.var.tenant).usage({ from, to, groupBy: query.groupBy });
    return c.json(report, 200);
  },
);
