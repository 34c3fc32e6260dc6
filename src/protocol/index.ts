// The wire contract shared by the worker and runner-bridge. No Workers-only imports here.
export * from "./errors.ts";
export * from "./http.ts";
export * from "./json.ts";
export * from "./limits.ts";
export * from "./records.ts";
export * from "./responses.ts";
export * from "./result.ts";
export * from "./run.ts";
export * from "./runner.ts";
export * from "./viewer.ts";
export * from "./streams.ts";
export * from "./rerun.ts";
export * from "./pool.ts";
export * from "./pool-api.ts";
export * from "./webhooks.ts";
export * from "./usage.ts";
export * from "./event-types.ts";
