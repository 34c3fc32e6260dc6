import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import { EDGE_LIMIT_VARS } from "./test/edge/limits.ts";

type ProjectTest = NonNullable<TestProjectInlineConfiguration["test"]> & { name: string; include: string[] };

/**
 * A project inside the Workers runtime (the vitest pool) on wrangler.toml, with the test
 * tenants' keys and token secret unless `bindings` says otherwise.
 */
function workersProject(test: ProjectTest, bindings: Record<string, string> = {}): TestProjectInlineConfiguration {
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: { API_KEYS: "key-a=tenant-a,key-b=tenant-b", TOKEN_SECRET: "test-token-secret", ...bindings },
        },
      }),
    ],
    test,
  };
}

/** A project of real processes (`wrangler dev`, bridges, a browser) in Node, one file at a time. */
function nodeProject(test: ProjectTest & { testTimeout: number }): TestProjectInlineConfiguration {
  return { test: { environment: "node", hookTimeout: 120_000, fileParallelism: false, ...test } };
}

// The control plane inside the Workers runtime, and everything that needs real processes (the
// bridge, the CLI, the console, the fault suites) against a real `wrangler dev`.
export default defineConfig({
  test: {
    // Builds the console (console/dist) when missing or stale: every wrangler dev serves it.
    // Then the API reference page's assets (console/dist/docs), which the console build keeps.
    globalSetup: ["./test/support/build-console.ts", "./test/edge/openapi/build-docs-setup.ts"],
    projects: [
      // Checkpoints bounded at 4 MiB here, so the size limit is reached without a 50 MiB body;
      // the per-run bounds (test/edge/limits.ts) lowered likewise, so tests reach them cheaply.
      workersProject(
        {
          name: "edge",
          include: ["test/edge/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/edge/dev/**"],
        },
        // DEV_SIGN_IN_KEY as .dev.vars sets it: the dev sign-in route answers on loopback hosts only.
        // ALLOW_HTTP_WEBHOOKS as .dev.vars sets it: webhook endpoints may be http: to loopback.
        {
          CHECKPOINT_MAX_BYTES: String(4 * 1024 * 1024),
          DEV_SIGN_IN_KEY: "key-a",
          ALLOW_HTTP_WEBHOOKS: "true",
          WEBHOOK_ATTEMPT_TIMEOUT_MS: "2000",
          ...EDGE_LIMIT_VARS,
        },
      ),
      // The few edge behaviours only a real connection shows, against a real `wrangler dev`.
      nodeProject({ name: "edge-dev", include: ["test/edge/dev/**/*.test.ts"], testTimeout: 60_000 }),
      nodeProject({ name: "bridge", include: ["test/bridge/**/*.test.ts"], testTimeout: 120_000 }),
      nodeProject({ name: "client", include: ["test/client/**/*.test.ts"], testTimeout: 120_000 }),
      // Runner pools: real `runner-bridge pool` hosts taking runs from a real `wrangler dev`.
      nodeProject({ name: "pools", include: ["test/pools/**/*.test.ts"], testTimeout: 180_000 }),
      // A representative subset again with every agent under --sandbox os (exactness, takeover,
      // commands, codex and claude-code resume): the sandbox must change no transcript.
      nodeProject({
        name: "bridge-sandboxed",
        include: ["test/bridge/{run,takeover,commands,resume,real-agents}.test.ts"],
        env: { BRIDGE_SANDBOX: "os" },
        testTimeout: 120_000,
      }),
      // Fault suites: the edge killed and restarted, a flapping network, bridges killed, all at
      // seeded random points (FAULT_SEED replays them), against real processes.
      nodeProject({ name: "faults", include: ["test/faults/*.test.ts"], testTimeout: 180_000 }),
      // Fuzzing the HTTP API, both sockets and the stream routes in the Workers runtime.
      workersProject(
        { name: "fuzz", include: ["test/faults/fuzz/**/*.test.ts"], testTimeout: 180_000 },
        // Long polls and AG-UI streams bounded to milliseconds, so an accepted read never holds a request.
        {
          STREAM_LONG_POLL_MS: "20",
          AGUI_HEARTBEAT_MS: "20",
          AGUI_STREAM_LIFETIME_MS: "200",
          FAULT_SEED: process.env.FAULT_SEED ?? "",
        },
      ),
      // Stream routes in-process, with no anonymous access; the conformance suite below needs it on.
      // Forks copy streams of megabytes: a loaded 2-core machine took over the default 5 s once.
      workersProject(
        { name: "streams-worker", include: ["test/streams/worker/**/*.test.ts"], testTimeout: 30_000 },
        { API_KEYS: "stream-key-a=tenant-a,stream-key-b=tenant-b" },
      ),
      nodeProject({ name: "console", include: ["test/console/**/*.test.ts"], testTimeout: 180_000 }),
      nodeProject({ name: "serve", include: ["test/serve/**/*.test.ts"], testTimeout: 120_000 }),
      nodeProject({ name: "cli", include: ["test/cli/**/*.test.ts"], testTimeout: 120_000 }),
      nodeProject({
        name: "streams",
        include: ["test/streams/**/*.test.ts"],
        exclude: ["test/streams/worker/**"],
        testTimeout: 60_000,
      }),
    ],
  },
});
