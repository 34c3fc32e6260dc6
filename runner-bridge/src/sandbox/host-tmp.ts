import fs from "node:fs";
import path from "node:path";
import { onPath } from "./check.ts";

const HOST_TMP = "/tmp";

/**
 * The sandbox's /tmp is a private tmpfs, which would also hide an agent installed under the
 * host's /tmp (a repository cloned there, its node_modules). So the places there that the
 * agent's command names — its program as named and where it leads, each argument naming an
 * existing path, each PATH entry — are shown read-only: for each, its top directory under /tmp
 * (a package's siblings, such as a CLI's platform binary, live beside it), or the file itself
 * when it lies directly in /tmp.
 */
export function hostTmpPlaces(program: string, args: string[], searchPath: string | undefined, cwd: string): string[] {
  const found = program.includes("/") ? path.resolve(cwd, program) : onPath(program, searchPath ?? "");
  const named = [found, ...args.map((arg) => path.resolve(cwd, arg)), ...(searchPath ?? "").split(":")];
  const places = new Set<string>();
  for (const candidate of named) {
    if (!candidate || !path.isAbsolute(candidate) || !fs.existsSync(candidate)) continue;
    for (const where of [candidate, fs.realpathSync(candidate)]) {
      const place = topUnderTmp(where);
      if (place !== null) places.add(place);
    }
  }
  return [...places].sort();
}

function topUnderTmp(where: string): string | null {
  const relative = path.relative(HOST_TMP, where);
  if (relative === "" || relative.startsWith("..") || path.isAbsolute(relative)) return null;
  const first = relative.split(path.sep)[0] as string;
  return path.join(HOST_TMP, first);
}
