import type { Env } from "../env.ts";
import { dispatcherStub } from "../objects/stubs.ts";
import { isTerminal, type Placement, type Result, type RunRecord } from "../protocol/index.ts";

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
