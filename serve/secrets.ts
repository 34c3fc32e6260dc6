/**
 * Which secrets the worker gets and from where. Secrets are API_KEYS, TOKEN_SECRET and any other
 * name `.dev.vars` lists. Values come from this process's environment; in development (`--dev`)
 * a name missing there falls back to `.dev.vars`. Outside development TOKEN_SECRET must come from
 * the environment: the value in `.dev.vars` is committed to the repository, so tokens signed with
 * it protect nothing. The values reach workerd through its environment, never through a file.
 */
import fs from "node:fs";
import path from "node:path";
import { parseEnv } from "node:util";

const KNOWN_SECRETS = ["API_KEYS", "TOKEN_SECRET"];

export interface Secrets {
  /** Name → value, for the bindings that have a value. */
  values: Record<string, string>;
  /** Where each bound value came from, for the startup summary (never the value). */
  sources: Record<string, "environment" | ".dev.vars">;
  warnings: string[];
}

export class MissingSecret extends Error {}

export function readDevVars(configPath: string): Record<string, string> {
  const file = path.join(path.dirname(configPath), ".dev.vars");
  if (!fs.existsSync(file)) return {};
  return parseEnv(fs.readFileSync(file, "utf8")) as Record<string, string>;
}

export function resolveSecrets(
  env: NodeJS.ProcessEnv,
  devVars: Record<string, string>,
  dev: boolean,
  overridden: Set<string>,
): Secrets {
  const names = [...new Set([...KNOWN_SECRETS, ...Object.keys(devVars)])].filter((n) => !overridden.has(n));
  const values: Record<string, string> = {};
  const sources: Secrets["sources"] = {};
  const warnings: string[] = [];
  for (const name of names) {
    const fromEnv = env[name];
    if (fromEnv !== undefined && fromEnv !== "") {
      values[name] = fromEnv;
      sources[name] = "environment";
    } else if (dev && devVars[name] !== undefined) {
      values[name] = devVars[name] as string;
      sources[name] = ".dev.vars";
    }
  }
  if (!overridden.has("TOKEN_SECRET") && values.TOKEN_SECRET === undefined) {
    throw new MissingSecret(
      dev
        ? "TOKEN_SECRET is in neither the environment nor .dev.vars"
        : "TOKEN_SECRET is not set: export TOKEN_SECRET=<a long random string>, or pass --dev to use .dev.vars",
    );
  }
  if (!overridden.has("API_KEYS") && values.API_KEYS === undefined) {
    warnings.push("API_KEYS is not set: every API-key request will answer 401");
  }
  if (!dev && Object.keys(devVars).length > 0) {
    const ignored = Object.keys(devVars).filter((n) => sources[n] === undefined && !overridden.has(n));
    if (ignored.length > 0) warnings.push(`.dev.vars not read without --dev (${ignored.join(", ")} unset)`);
  }
  return { values, sources, warnings };
}
