import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { configDefaults, defineConfig } from "vitest/config";

// Two projects: the control plane inside the Workers runtime, and runner-bridge as real
// processes against a real `wrangler dev`.
export default defineConfig({
  test: {
    // Builds the console (console/dist) when missing or stale: every wrangler dev serves it.
    // Then the API reference page's assets (console/dist/docs), which the console build keeps.
    globalSetup: ["./test/support/build-console.ts", "./test/edge/openapi/build-docs-setup.ts"],
    projects: [
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                API_KEYS: "key-a=tenant-a,key-b=tenant-b",
                TOKEN_SECRET: "test-token-secret",
              },
            },
          }),
        ],
        test: { name: "edge", include: ["test/edge/**/*.test.ts"], exclude: [...configDefaults.exclude, "test/edge/dev/**"] },
      },
      {
        // The few edge behaviours only a real connection shows, against a real `wrangler dev`.
        test: {
          name: "edge-dev",
          include: ["test/edge/dev/**/*.test.ts"],
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: "bridge",
          include: ["test/bridge/**/*.test.ts"],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        // Fault suites: the edge killed and restarted, a flapping network, bridges killed, all at
        // seeded random points (FAULT_SEED replays them), against real processes.
        test: {
          name: "faults",
          include: ["test/faults/*.test.ts"],
          environment: "node",
          testTimeout: 180_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        // Fuzzing the HTTP API, both sockets and the stream routes in the Workers runtime.
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                API_KEYS: "key-a=tenant-a,key-b=tenant-b",
                TOKEN_SECRET: "test-token-secret",
                STREAM_LONG_POLL_MS: "20",
                FAULT_SEED: process.env.FAULT_SEED ?? "",
              },
            },
          }),
        ],
        test: { name: "fuzz", include: ["test/faults/fuzz/**/*.test.ts"], testTimeout: 180_000 },
      },
      {
        // Stream routes in-process, with no anonymous access; the conformance suite below needs it on.
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: { API_KEYS: "stream-key-a=tenant-a,stream-key-b=tenant-b", TOKEN_SECRET: "test-token-secret" },
            },
          }),
        ],
        test: { name: "streams-worker", include: ["test/streams/worker/**/*.test.ts"] },
      },
      {
        test: {
          name: "console",
          include: ["test/console/**/*.test.ts"],
          environment: "node",
          testTimeout: 180_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: "serve",
          include: ["test/serve/**/*.test.ts"],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: "cli",
          include: ["test/cli/**/*.test.ts"],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: "streams",
          include: ["test/streams/**/*.test.ts"],
          exclude: ["test/streams/worker/**"],
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
