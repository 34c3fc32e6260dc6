import type { Env } from "../env.ts";
import { dispatcherStub } from "../objects/stubs.ts";
import { isTerminal, type Placement, type Result, type RunRecord, type RunsPage } from "../protocol/index.ts";

const NOT_POOLED: Placement = { poolHost: null, queuePosition: null, dispatch: null };

/**
 * A pool run's record with its dispatcher's view filled in: the host holding it, its place in the
 * queue and why it waits. The run object does not store these (a position changes whenever an
 * older run leaves), so the route asks the dispatcher as it answers.
 */
export async function withPlacement(env: Env, tenant: string, record: RunRecord): Promise<RunRecord> {
  if (record.queue === null) return { ...record, ...NOT_POOLED };
  const ended = isTerminal(record.status);
  const placement = await dispatcherStub(env, tenant, record.queue).placement(tenant, record.queue, record.id, ended);
  return { ...record, ...placement };
}

/** The same, for a Result carrying a record (or a value holding one as `run`). */
export async function placeResult<T extends { run: RunRecord }>(env: Env, tenant: string, result: Result<T>) {
  if (!result.ok) return result;
  return { ...result, value: { ...result.value, run: await withPlacement(env, tenant, result.value.run) } };
}

/** A page of the run list with each pool run's host, asking each queue on the page's dispatcher once. */
export async function withPoolHosts(env: Env, tenant: string, page: Result<RunsPage>): Promise<Result<RunsPage>> {
  if (!page.ok) return page;
  const byQueue = new Map<string, string[]>();
  for (const run of page.value.runs)
    if (run.queue !== null) byQueue.set(run.queue, [...(byQueue.get(run.queue) ?? []), run.runId]);
  const hosts: Record<string, string | null> = {};
  await Promise.all(
    [...byQueue].map(async ([queue, runIds]) =>
      Object.assign(hosts, await dispatcherStub(env, tenant, queue).poolHosts(runIds)),
    ),
  );
  return {
    ...page,
    value: { ...page.value, runs: page.value.runs.map((run) => ({ ...run, poolHost: hosts[run.runId] ?? null })) },
  };
}
