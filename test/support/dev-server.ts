import { afterAll, beforeAll } from "vitest";
import { Api } from "./api.ts";
import { type DevServer, startWranglerDev } from "./wrangler-dev.ts";

export interface UsedDevServer {
  /** The server's address (inside a test: it starts before the file's tests). */
  readonly url: string;
  /** The API as tenant alpha calls it. */
  readonly api: Api;
}

/**
 * One real `wrangler dev` for a test file: started before its tests, stopped after them. `vars`
 * override the worker's vars (e.g. a lowered per-run bound).
 */
export function useDevServer(vars: Record<string, string> = {}): UsedDevServer {
  let server: DevServer | undefined;
  beforeAll(async () => {
    server = await startWranglerDev(vars);
  });
  afterAll(async () => {
    await server?.stop();
  });
  const url = () => {
    if (!server) throw new Error("wrangler dev is not running: use it inside a test");
    return server.url;
  };
  return {
    get url() {
      return url();
    },
    api: new Api(url),
  };
}
