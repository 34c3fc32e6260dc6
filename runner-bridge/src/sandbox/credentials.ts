import fs from "node:fs";
import path from "node:path";

/** Host credential directories under a home directory: never visible inside, even in the agent's own HOME. */
export const CREDENTIAL_DIRS = [
  ".ssh",
  ".aws",
  ".azure",
  ".config/gh",
  ".config/hub",
  ".config/gcloud",
  ".docker",
  ".kube",
  ".gnupg",
];

/** Host credential files under a home directory, likewise. */
export const CREDENTIAL_FILES = [
  ".netrc",
  ".git-credentials",
  ".npmrc",
  ".pypirc",
  ".cargo/credentials",
  ".cargo/credentials.toml",
];

/**
 * The credential paths of these homes for the sandbox to mask. One that exists is masked as it
 * is. One that does not exist yet but lies in a place the agent may write (its HOME, say) is made
 * first, an empty directory (0700) or an empty file (0600), so that the mask has something to
 * cover and the agent cannot create it (a `~/.ssh/authorized_keys`, a `~/.netrc`); the empty
 * placeholder stays there after the run. Anywhere else the read-only root already keeps it from
 * being created.
 */
export function credentialPaths(homes: readonly string[], writable: readonly string[]): string[] {
  const out: string[] = [];
  for (const home of new Set(homes.map((h) => path.resolve(h)))) {
    for (const [names, kind] of [
      [CREDENTIAL_DIRS, "dir"],
      [CREDENTIAL_FILES, "file"],
    ] as const) {
      for (const name of names) {
        const target = path.join(home, name);
        if (!fs.lstatSync(target, { throwIfNoEntry: false }) && writable.some((place) => inside(target, place))) {
          makePlaceholder(target, kind);
        }
        out.push(target);
      }
    }
  }
  return out;
}

function inside(target: string, place: string): boolean {
  const rel = path.relative(path.resolve(place), target);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

function makePlaceholder(target: string, kind: "dir" | "file"): void {
  if (kind === "dir") {
    fs.mkdirSync(target, { recursive: true, mode: 0o700 });
    return;
  }
  fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  try {
    fs.writeFileSync(target, "", { flag: "wx", mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
}
