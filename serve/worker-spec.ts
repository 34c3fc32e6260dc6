/**
 * What workerd needs to know about the worker, read from the wrangler config with wrangler's own
 * reader (so it is parsed and validated the way `wrangler deploy` does). Only what this mode can
 * serve faithfully is accepted: local Durable Object classes, vars, and static assets. Any other
 * binding is refused by name rather than silently left out.
 */
import fs from "node:fs";
import path from "node:path";
import { unstable_readConfig } from "wrangler";

export interface DurableObjectSpec {
  binding: string;
  className: string;
  /** Stable across restarts: it names the class's directory under the data dir and seeds object ids. */
  uniqueKey: string;
  sql: boolean;
}

export interface AssetsSpec {
  directory: string;
  /** The worker's binding to the assets, if the config names one. */
  binding: string | null;
  /** `true`: the worker sees every request; a list: glob patterns (`!` negates) that go to the worker first. */
  runWorkerFirst: boolean | string[];
  notFound: "single-page-application" | "404-page" | "none";
}

export interface WorkerSpec {
  name: string;
  main: string;
  compatibilityDate: string;
  compatibilityFlags: string[];
  vars: Record<string, unknown>;
  durableObjects: DurableObjectSpec[];
  assets: AssetsSpec | null;
  warnings: string[];
}

/** The part of wrangler's normalised config this reads. */
interface WranglerConfig {
  name?: string;
  main?: string;
  compatibility_date?: string;
  compatibility_flags?: string[];
  vars?: Record<string, unknown>;
  durable_objects?: { bindings?: { name: string; class_name: string; script_name?: string; environment?: string }[] };
  migrations?: { new_sqlite_classes?: string[]; new_classes?: string[] }[];
  assets?: {
    directory?: string;
    binding?: string;
    run_worker_first?: boolean | string[];
    not_found_handling?: AssetsSpec["notFound"];
  };
  triggers?: { crons?: string[] };
  [field: string]: unknown;
}

/** Binding kinds a single workerd process cannot provide here. */
const UNSUPPORTED = [
  "kv_namespaces",
  "r2_buckets",
  "d1_databases",
  "services",
  "queues",
  "vectorize",
  "hyperdrive",
  "ai",
  "browser",
  "analytics_engine_datasets",
  "workflows",
  "send_email",
  "dispatch_namespaces",
  "mtls_certificates",
  "secrets_store_secrets",
  "pipelines",
  "containers",
  "wasm_modules",
  "text_blobs",
  "data_blobs",
  "unsafe",
];

export class UnsupportedConfig extends Error {}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.values(value).every(isEmpty);
  return false;
}

export function readWorkerSpec(configPath: string): WorkerSpec {
  if (!fs.existsSync(configPath)) throw new UnsupportedConfig(`no wrangler config at ${configPath}`);
  const config = unstable_readConfig({ config: configPath }, { hideWarnings: true }) as unknown as WranglerConfig;
  const name = config.name ?? "worker";
  if (!config.main) throw new UnsupportedConfig(`${configPath} has no main`);
  if (!config.compatibility_date) throw new UnsupportedConfig(`${configPath} has no compatibility_date`);
  const present = UNSUPPORTED.filter((field) => !isEmpty(config[field]));
  if (present.length > 0) {
    throw new UnsupportedConfig(`npm run serve cannot provide these bindings: ${present.join(", ")}`);
  }
  const sqliteClasses = new Set((config.migrations ?? []).flatMap((m) => m.new_sqlite_classes ?? []));
  const durableObjects = (config.durable_objects?.bindings ?? []).map((b) => {
    if (b.script_name || b.environment) {
      throw new UnsupportedConfig(`Durable Object binding ${b.name} lives in another worker (${b.script_name})`);
    }
    return {
      binding: b.name,
      className: b.class_name,
      uniqueKey: `${name}-${b.class_name}`,
      sql: sqliteClasses.has(b.class_name),
    };
  });
  const warnings: string[] = [];
  if ((config.triggers?.crons ?? []).length > 0) warnings.push("cron triggers are not run by npm run serve");
  return {
    name,
    main: config.main,
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags ?? [],
    vars: config.vars ?? {},
    durableObjects,
    assets: readAssets(configPath, config, warnings),
    warnings,
  };
}

function readAssets(configPath: string, config: WranglerConfig, warnings: string[]): AssetsSpec | null {
  const assets = config.assets;
  if (!assets?.directory) return null;
  const directory = path.resolve(path.dirname(configPath), assets.directory);
  if (!fs.existsSync(directory)) {
    warnings.push(`assets directory ${directory} does not exist (not built yet?): serving the worker only`);
    return null;
  }
  return {
    directory,
    binding: assets.binding ?? null,
    runWorkerFirst: assets.run_worker_first ?? false,
    notFound: assets.not_found_handling ?? "none",
  };
}
