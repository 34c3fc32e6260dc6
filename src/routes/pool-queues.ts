import type { Env } from "../env.ts";
import { tenantPoolsStub } from "../objects/stubs.ts";
import { MAX_QUEUES } from "../objects/tenant-pools.ts";
import { type Failure, fail, ok, type Result } from "../protocol/index.ts";

/**
 * Where a new queue's name came from. A tenant at MAX_QUEUES is refused in the code of that input,
 * as validation refuses it (validate.ts): a body 422 `invalid_body`, a query 400 `invalid_query`,
 * a path 400 `invalid_path`.
 */
export type QueueNamedIn = "body" | "query" | "path";

const CODE_OF = { body: "invalid_body", query: "invalid_query", path: "invalid_path" } as const;

export function tooManyQueues(namedIn: QueueNamedIn, queue: string): Failure {
  const field = namedIn === "path" ? "the path's queue" : "queue";
  return fail(
    CODE_OF[namedIn],
    `${field}: the tenant has ${MAX_QUEUES} queues, as many as it may; "${queue}" is not one`,
  );
}

/** Records the queue on its first use, or refuses it past MAX_QUEUES. */
export async function useQueue(env: Env, tenant: string, queue: string, namedIn: QueueNamedIn): Promise<Result<null>> {
  return (await tenantPoolsStub(env, tenant).addQueue(queue)) ? ok(null) : tooManyQueues(namedIn, queue);
}
