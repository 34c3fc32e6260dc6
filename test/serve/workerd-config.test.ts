import { describe, expect, it } from "vitest";
import { renderWorkerdConfig } from "../../serve/workerd-config.ts";
import type { AssetsSpec, WorkerSpec } from "../../serve/worker-spec.ts";

// Which service the listening socket hands requests to: with every path worker-first, the router
// only serves the worker's ASSETS binding, so a request crosses one isolate instead of two.

function configWith(runWorkerFirst: AssetsSpec["runWorkerFirst"]): string {
  const spec: WorkerSpec = {
    name: "w",
    main: "/w/worker.js",
    compatibilityDate: "2026-11-01",
    compatibilityFlags: [],
    vars: {},
    durableObjects: [],
    assets: { directory: "/w/dist", binding: "ASSETS", runWorkerFirst, notFound: "none" },
    warnings: [],
  };
  return renderWorkerdConfig({
    spec,
    modules: ["worker.js"],
    dataDir: "/w/data",
    address: "127.0.0.1:8787",
    textFromEnv: {},
    router: "assets-router.js",
  });
}

const socketService = (config: string) => /sockets = \[\(name = "http",[^\n]*service = "(\w+)"/.exec(config)?.[1];

describe("the generated workerd config", () => {
  it("points the socket at the worker when every request goes to the worker first", () => {
    const config = configWith(true);
    expect(socketService(config)).toBe("main");
    expect(config).toContain('(name = "ASSETS", service = (name = "router", entrypoint = "Assets"))');
  });

  it("keeps the router in front when some paths reach the assets first", () => {
    expect(socketService(configWith(["/v1/*"]))).toBe("router");
    expect(socketService(configWith(false))).toBe("router");
  });
});
