/**
 * `--baseline REF`: the same bench against `npm run serve` of another commit, in the same run, so
 * a change is measured against the code before it at the same moment of a shared machine (whose
 * speed moves by 2× between runs). The commit is checked out in a temporary git worktree that
 * borrows this checkout's node_modules and built console, and is removed afterwards.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO } from "../test/support/wrangler-dev.ts";

export interface Baseline {
  /** The worktree: a checkout of `commit` that `npm run serve` can start from. */
  dir: string;
  /** The short commit REF named. */
  commit: string;
  remove(): void;
}

const git = (args: string[]) => execFileSync("git", args, { cwd: REPO, encoding: "utf8", stdio: "pipe" }).trim();

export function checkOutBaseline(ref: string): Baseline {
  let commit: string;
  try {
    commit = git(["rev-parse", "--short", "--verify", `${ref}^{commit}`]);
  } catch {
    throw new Error(`--baseline ${ref}: not a commit of this repository`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-baseline-"));
  git(["worktree", "add", "--detach", "--force", dir, commit]);
  const remove = () => {
    try {
      git(["worktree", "remove", "--force", dir]);
    } catch {
      fs.rmSync(dir, { recursive: true, force: true });
      git(["worktree", "prune"]);
    }
  };
  try {
    fs.symlinkSync(path.join(REPO, "node_modules"), path.join(dir, "node_modules"), "dir");
    // The assets serve puts in front of (or behind) the worker: the same build for both targets.
    const built = path.join(REPO, "console/dist");
    if (fs.existsSync(built)) fs.cpSync(built, path.join(dir, "console/dist"), { recursive: true });
  } catch (error) {
    remove();
    throw error;
  }
  return { dir, commit, remove };
}
