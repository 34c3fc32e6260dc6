import fs from "node:fs";
import path from "node:path";
import { sessionIdProblem } from "../adapters/session-id.ts";
import type { Archive, ArchiveFile } from "./archive.ts";
import { claudeProjectDir, type SessionPlaces } from "./files.ts";

/**
 * Writes a checkpoint's files where the new agent will look for them; returns the paths written.
 *
 * A checkpoint is whatever the previous sandbox uploaded, so it is treated as hostile: only what
 * collection takes for this adapter is restored (codex: its thread's rollouts under
 * `sessions/`; claude-code: `<session>.jsonl` in the projects directory; ndjson: the
 * `--checkpoint` tree), and anything else (a codex `config.toml`, say) refuses the whole restore
 * before one byte is written. Below the place's root no directory may be a link, an existing
 * target that is a link is refused, and each file is written to a fresh temporary file opened
 * with O_NOFOLLOW | O_EXCL, then renamed over the target: a rename replaces the name, never the
 * file a symbolic or hard link points at.
 */
export function restoreSession(places: SessionPlaces, archive: Archive): string[] {
  const idProblem = sessionIdProblem(places.adapter, archive.session);
  if (idProblem) throw new Error(`the checkpoint's ${idProblem}`);
  const plan = archive.files.map((file) => ({ file, ...placeOf(places, archive.session, file) }));
  for (const { root, parts } of plan) {
    checkRoot(places, root);
    checkLinks(root, parts);
  }
  return plan.map(({ file, root, parts }) => writeBelow(root, parts, file.data));
}

/** The root a file is restored under and its path below it; throws for what collection never takes. */
function placeOf(places: SessionPlaces, session: string, file: ArchiveFile): { root: string; parts: string[] } {
  const name = `${file.root}/${file.path}`;
  const refuse = (takes: string) =>
    new Error(
      `the checkpoint holds ${JSON.stringify(name)}, which a ${places.adapter} checkpoint never contains (it takes ${takes}); nothing was restored`,
    );
  const parts = file.path === "" ? [] : file.path.split("/");
  switch (places.adapter) {
    case "codex": {
      const rollout = `sessions/…/rollout-…-${session}.jsonl`;
      if (file.root !== "codex-home" || parts[0] !== "sessions" || parts.length < 2) throw refuse(rollout);
      if (!(parts.at(-1) as string).endsWith(`-${session}.jsonl`)) throw refuse(rollout);
      return { root: places.codexHome, parts };
    }
    case "claude-code":
      if (file.root !== "claude-project" || file.path !== `${session}.jsonl`) throw refuse(`${session}.jsonl`);
      return { root: claudeProjectDir(places), parts };
    default: {
      if (file.root !== "checkpoint") throw refuse("the files under its --checkpoint path");
      const target = places.checkpointPath;
      if (target === undefined)
        throw new Error("the checkpoint holds an agent's --checkpoint files: pass --checkpoint PATH to restore them");
      // A single file is written in place of the path itself, in its parent directory.
      return parts.length === 0
        ? { root: path.dirname(target), parts: [path.basename(target)] }
        : { root: target, parts };
    }
  }
}

/**
 * The place's root, and each directory from the agent-writable base it lies in down to it, is no
 * link: a previous agent could have replaced its `.codex`, its claude `projects/<cwd>` or its
 * `--checkpoint` directory with a link to anywhere the bridge (which restores, outside any sandbox)
 * may write.
 */
function checkRoot(places: SessionPlaces, root: string): void {
  const bases = [places.cwd, path.dirname(places.codexHome), path.dirname(places.claudeConfigDir)];
  const base = bases.find((dir) => root === dir || root.startsWith(dir + path.sep));
  const chain = base === undefined ? [root] : path.relative(base, root).split(path.sep).filter(Boolean);
  let at = base ?? "";
  for (const part of chain) {
    at = base === undefined ? part : path.join(at, part);
    if (fs.lstatSync(at, { throwIfNoEntry: false })?.isSymbolicLink()) {
      throw new Error(`restoring the checkpoint would write through the link ${at}; nothing was restored`);
    }
  }
}

/** Below `root`, every existing directory on the way is a real directory and the target no link. */
function checkLinks(root: string, parts: string[]): void {
  let at = root;
  for (const [i, part] of parts.entries()) {
    at = path.join(at, part);
    const stat = fs.lstatSync(at, { throwIfNoEntry: false });
    if (!stat) return;
    const last = i === parts.length - 1;
    if (stat.isSymbolicLink())
      throw new Error(`restoring the checkpoint would write through the link ${at}; nothing was restored`);
    if (!last && !stat.isDirectory()) throw new Error(`${at} is in the way of the checkpoint (not a directory)`);
    if (last && !stat.isFile()) throw new Error(`${at} is in the way of the checkpoint (not a regular file)`);
  }
}

function writeBelow(root: string, parts: string[], data: Buffer): string {
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  let dir = root;
  for (const part of parts.slice(0, -1)) {
    dir = path.join(dir, part);
    if (!fs.lstatSync(dir, { throwIfNoEntry: false })) fs.mkdirSync(dir, { mode: 0o700 });
  }
  const target = path.join(dir, parts.at(-1) as string);
  const temp = path.join(dir, `.${parts.at(-1)}.restoring-${process.pid}`);
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
  const fd = fs.openSync(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  try {
    fs.writeSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temp, target);
  return target;
}
