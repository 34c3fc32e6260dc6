import { type DevServer, startWranglerDev } from "../../support/wrangler-dev.ts";

export { freePort, REPO } from "../../support/wrangler-dev.ts";

export type Edge = DevServer;

/** The control plane as `npm start` serves it, with the dev tenants of `.dev.vars`. */
export function startEdge(): Promise<Edge> {
  return startWranglerDev();
}
