import fs from "node:fs";
import path from "node:path";
import { type AgentProfile, AgentProfiles } from "../../../src/protocol/pool.ts";
import { requireSandboxTools } from "../sandbox/check.ts";
import { type SandboxFields, type SandboxOptions, sandboxOptions } from "../sandbox/policy.ts";

/** A profile ready to launch: its command with the program found and relative scripts made absolute. */
export interface ServedProfile {
  name: string;
  profile: AgentProfile;
  /** argv, the first element an absolute path. */
  command: string[];
  /** The profile's sandbox (pools default to `os` with no network); workspace and hidden root added per run. */
  sandbox: SandboxOptions;
}

export interface LoadedProfiles {
  served: Map<string, ServedProfile>;
  /** One line per profile left out (its program is not on PATH), for the pool's log. */
  skipped: string[];
}

export class ProfilesError extends Error {}

/**
 * Reads and checks an agents file (name → profile, src/protocol/pool.ts). A profile whose program
 * is not found is left out with a line saying so, so one committed file can list agents that only
 * some hosts have installed. An element of `command` starting with `./` or `../` is a path
 * relative to the agents file (the agent's own working directory is its run's fresh workspace).
 */
export function loadProfiles(file: string, env: NodeJS.ProcessEnv = process.env): LoadedProfiles {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new ProfilesError(`cannot read the agents file ${file}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ProfilesError(`the agents file ${file} is not JSON: ${(err as Error).message}`);
  }
  const sandboxes = takeSandboxFields(json);
  const parsed = AgentProfiles.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join(".") : "(top level)";
    throw new ProfilesError(`the agents file ${file} is invalid at ${where}: ${issue?.message ?? "bad value"}`);
  }
  const base = path.dirname(path.resolve(file));
  const served = new Map<string, ServedProfile>();
  const skipped: string[] = [];
  for (const [name, profile] of Object.entries(parsed.data)) {
    const checkpoint = profile.checkpoint;
    if (checkpoint !== undefined && (path.isAbsolute(checkpoint) || checkpoint.split(/[\\/]/).includes(".."))) {
      throw new ProfilesError(
        `the agents file ${file} is invalid at ${name}.checkpoint: a path inside the run's workspace`,
      );
    }
    const fields = sandboxes.get(name) ?? {};
    // A profile's HOME (one for all its runs on this host, e.g. a CLI logged in by file) may be relative to the file.
    if (fields.home) fields.home = path.resolve(base, fields.home);
    const sandbox = sandboxOptions(fields, "os");
    if (typeof sandbox === "string")
      throw new ProfilesError(`the agents file ${file} is invalid at ${name}: ${sandbox}`);
    const [program, ...rest] = profile.command as [string, ...string[]];
    const found = findProgram(relativeTo(base, program), env.PATH ?? "");
    if (!found) {
      skipped.push(`profile ${name} left out: ${program} is not on PATH`);
      continue;
    }
    const unusable = sandbox.mode === "os" ? sandboxRefusal(sandbox) : null;
    if (unusable) {
      skipped.push(`profile ${name} left out: ${unusable} (or give it "sandbox": "none")`);
      continue;
    }
    served.set(name, { name, profile, sandbox, command: [found, ...rest.map((arg) => relativeTo(base, arg))] });
  }
  if (served.size === 0) {
    throw new ProfilesError(
      `the agents file ${file} has no profile this host can run (${skipped.join("; ") || "it is empty"})`,
    );
  }
  return { served, skipped };
}

/**
 * Takes each profile's `sandbox`, `network` and `home` out of the parsed file (checked by sandboxOptions
 * instead), so the rest is checked by the shared AgentProfile schema as it is.
 */
function takeSandboxFields(json: unknown): Map<string, SandboxFields> {
  const fields = new Map<string, SandboxFields>();
  if (typeof json !== "object" || json === null || Array.isArray(json)) return fields;
  for (const [name, profile] of Object.entries(json as Record<string, unknown>)) {
    if (typeof profile !== "object" || profile === null || Array.isArray(profile)) continue;
    const { sandbox, network, home, ...rest } = profile as Record<string, unknown>;
    const taken: SandboxFields = {};
    if (sandbox !== undefined) taken.sandbox = String(sandbox);
    if (network !== undefined) taken.network = String(network);
    if (home !== undefined) taken.home = typeof home === "string" ? home : "";
    fields.set(name, taken);
    (json as Record<string, unknown>)[name] = rest;
  }
  return fields;
}

/** Why an OS sandbox cannot be set up on this host (bwrap missing, no namespaces), or null. */
function sandboxRefusal(sandbox: SandboxOptions): string | null {
  try {
    requireSandboxTools(sandbox.network);
    return null;
  } catch (err) {
    return (err as Error).message.replace(/ \(or run with --sandbox none\)$/, "");
  }
}

function relativeTo(base: string, arg: string): string {
  return arg.startsWith("./") || arg.startsWith("../") ? path.resolve(base, arg) : arg;
}

/** An absolute path as given, or the first executable of that name on PATH. */
export function findProgram(program: string, searchPath: string): string | null {
  if (program.includes("/")) return executable(program) ? path.resolve(program) : null;
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, program);
    if (executable(candidate)) return candidate;
  }
  return null;
}

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
