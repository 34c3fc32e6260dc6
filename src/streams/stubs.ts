import type { Env } from "../env.ts";
import type { StreamObject } from "../objects/stream-object.ts";

/** The StreamObject of one stream: named by tenant and path, so a path under two tenants is two streams. */
export function streamStub(env: Env, tenant: string, path: string): DurableObjectStub<StreamObject> {
  return env.STREAMS.get(env.STREAMS.idFromName(JSON.stringify([tenant, path])));
}
