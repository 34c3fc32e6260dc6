import { createHash } from "node:crypto";

/**
 * The checkpoint archive: the bytes the bridge uploads and the edge stores opaquely.
 *
 *   runner-bridge-checkpoint 1\n
 *   {"provider":"codex","session":"thr_1","files":[{"root":"codex-home","path":"sessions/…","bytes":123},…]}\n
 *   <the first file's bytes><the second file's bytes>…
 *
 * A magic line, one JSON manifest line, then every file's bytes back to back in manifest order.
 * Files are sorted by root and path and nothing time-dependent is recorded, so the same files
 * give the same bytes and the same digest (an unchanged session is never uploaded twice).
 */
export const MAGIC = "runner-bridge-checkpoint 1";

/** Where a file is restored: `codex-home` under CODEX_HOME, `claude-project` under the projects
 * directory of the new cwd, `checkpoint` at the ndjson agent's `--checkpoint` path. */
export type ArchiveRoot = "codex-home" | "claude-project" | "checkpoint";
const ROOTS: readonly ArchiveRoot[] = ["codex-home", "claude-project", "checkpoint"];

export interface ArchiveFile {
  root: ArchiveRoot;
  /** Relative, `/`-separated, no `..`; "" is the checkpoint path itself (a single file). */
  path: string;
  data: Buffer;
}

export interface Archive {
  provider: string;
  session: string;
  files: ArchiveFile[];
}

export function encodeArchive(archive: Archive): Buffer {
  const files = [...archive.files].sort((a, b) =>
    a.root === b.root ? (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) : a.root < b.root ? -1 : 1,
  );
  for (const file of files) checkPath(file.path);
  const manifest = {
    provider: archive.provider,
    session: archive.session,
    files: files.map((f) => ({ root: f.root, path: f.path, bytes: f.data.length })),
  };
  return Buffer.concat([Buffer.from(`${MAGIC}\n${JSON.stringify(manifest)}\n`), ...files.map((f) => f.data)]);
}

/** Parses an archive; throws saying what is wrong with it. */
export function decodeArchive(bytes: Buffer): Archive {
  const first = bytes.indexOf(0x0a);
  if (first < 0 || bytes.toString("utf8", 0, first) !== MAGIC) throw new Error("not a runner-bridge checkpoint");
  const second = bytes.indexOf(0x0a, first + 1);
  if (second < 0) throw new Error("checkpoint manifest is cut off");
  let manifest: { provider?: unknown; session?: unknown; files?: unknown };
  try {
    manifest = JSON.parse(bytes.toString("utf8", first + 1, second)) as typeof manifest;
  } catch {
    throw new Error("checkpoint manifest is not JSON");
  }
  if (typeof manifest.provider !== "string" || typeof manifest.session !== "string" || !Array.isArray(manifest.files))
    throw new Error("checkpoint manifest lacks provider, session or files");
  let at = second + 1;
  const files: ArchiveFile[] = [];
  for (const entry of manifest.files as { root?: unknown; path?: unknown; bytes?: unknown }[]) {
    const { root, path, bytes: size } = entry ?? {};
    if (!ROOTS.includes(root as ArchiveRoot) || typeof path !== "string" || !Number.isSafeInteger(size))
      throw new Error(`checkpoint manifest has a bad entry ${JSON.stringify(entry)}`);
    checkPath(path);
    const end = at + (size as number);
    if ((size as number) < 0 || end > bytes.length) throw new Error(`checkpoint is cut off in ${path}`);
    files.push({ root: root as ArchiveRoot, path, data: Buffer.from(bytes.subarray(at, end)) });
    at = end;
  }
  if (at !== bytes.length) throw new Error("checkpoint has bytes after its last file");
  return { provider: manifest.provider, session: manifest.session, files };
}

/** `sha256:<hex>` of the bytes, the form the edge checks and stores. */
export function digestOf(bytes: Buffer): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** A path that stays inside its root when joined to it. */
function checkPath(path: string): void {
  if (path === "") return;
  const parts = path.split("/");
  if (
    path.startsWith("/") ||
    path.includes("\\") ||
    path.includes("\0") ||
    parts.some((p) => p === ".." || p === "" || p === ".")
  )
    throw new Error(`checkpoint path ${JSON.stringify(path)} would leave its directory`);
}
