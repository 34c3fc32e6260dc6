import { BridgeExit, EXIT } from "./exit.ts";

/** Variables every agent gets from the bridge's environment; anything else only with --env. */
export const BASE_ENV = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TERM",
  "TMPDIR",
  "TZ",
];

/**
 * The agent's environment: the base variables, then each `--env` name (which must be set). An
 * attaching bridge rebuilds it from the spec's names to know where the agent keeps its session.
 */
export function agentEnvironment(envNames: readonly string[], strict = true): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of BASE_ENV) {
    const v = process.env[name];
    if (v !== undefined) env[name] = v;
  }
  for (const name of envNames) {
    const v = process.env[name];
    if (v === undefined) {
      if (strict) throw new BridgeExit(EXIT.failure, `--env ${name}: the variable is not set`);
      continue;
    }
    env[name] = v;
  }
  return env;
}
