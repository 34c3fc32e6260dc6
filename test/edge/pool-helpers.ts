import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { call, createRun, DAY, json, KEY_A } from "./helpers.ts";
import { openSocket, type SocketProbe } from "./sockets.ts";

/** Mints a pool key for the tenant of `apiKey`. */
export async function mintPoolKey(apiKey = KEY_A): Promise<{ id: string; key: string }> {
  return json(await call("/v1/pool-keys", { method: "POST", json: {}, key: apiKey }), 201);
}

export interface HostOptions {
  hostId: string;
  slots?: number;
  profiles?: string[];
  queue?: string;
  running?: Array<{ assignmentId: string; runId: string }>;
}

/** A pool host connected and welcomed. */
export async function connectHost(poolKey: string, options: HostOptions): Promise<SocketProbe> {
  const queue = options.queue === undefined ? "" : `?queue=${options.queue}`;
  const host = await openSocket(`/v1/pools/connect${queue}`, null, poolKey);
  host.send({
    type: "hello",
    hostId: options.hostId,
    slots: options.slots ?? 2,
    profiles: options.profiles ?? ["demo"],
    labels: [],
    running: options.running ?? [],
  });
  await host.next("welcome");
  return host;
}

/** A pool run: `agent` names the profile. */
export function createPoolRun(body: Record<string, unknown> = {}, key = KEY_A) {
  return createRun({ agent: "demo", input: { prompt: "hello" }, ...body }, key);
}

export function dispatcherObject(queue = "default", tenant = "tenant-a") {
  return env.DISPATCHERS.get(env.DISPATCHERS.idFromName(JSON.stringify([tenant, queue])));
}

/** Moves the dispatcher `ms` into the future (every lease and avoidance pulled in), then rings its alarm. */
export async function advanceDispatcher(ms: number, queue = "default", tenant = "tenant-a"): Promise<void> {
  const dispatcher = dispatcherObject(queue, tenant);
  await runInDurableObject(dispatcher, async (_instance, state) => {
    state.storage.sql.exec(
      "UPDATE runs SET lease_due = lease_due - ?, avoid_until = avoid_until - ? WHERE state IN ('assigned', 'queued')",
      ms,
      ms,
    );
    await state.storage.setAlarm(Date.now() + DAY);
  });
  if (!(await runDurableObjectAlarm(dispatcher))) throw new Error("the dispatcher's alarm did not run");
}

export async function setQueue(queue: string, body: unknown, key = KEY_A): Promise<Response> {
  return call(`/v1/queues/${queue}`, { method: "PUT", json: body, key });
}

/** Lets the host take the assignment and answer `accepted`; returns the assign frame. */
export async function takeAssignment(host: SocketProbe, runId?: string) {
  const assign = await host.next("assign", (frame) => runId === undefined || frame.runId === runId);
  host.send({ type: "accepted", assignmentId: assign.assignmentId });
  return assign;
}
