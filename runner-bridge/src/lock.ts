import fs from "node:fs";
import { pollUntil } from "./poll.ts";
import { processAlive } from "./proctree.ts";

/**
 * A tiny cross-process lock (O_EXCL lock file holding the owner's pid) around check-then-append,
 * so two bridges briefly alive on the same directory cannot both write one command.
 * A lock whose owner is dead is taken over.
 */
export async function withFileLock<T>(lockFile: string, fn: () => T, timeoutMs = 5000): Promise<T> {
  const taken = await pollUntil(() => tryLock(lockFile), timeoutMs, 10);
  if (!taken) {
    throw new Error(`lock ${lockFile} held by pid ${safeRead(lockFile) || "?"} for more than ${timeoutMs} ms`);
  }
  try {
    return fn();
  } finally {
    fs.rmSync(lockFile, { force: true });
  }
}

/** Takes the lock if it is free or its owner is dead; false while a live process holds it. */
function tryLock(lockFile: string): boolean {
  try {
    const fd = fs.openSync(lockFile, "wx", 0o600);
    fs.writeSync(fd, String(process.pid));
    fs.closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const owner = Number.parseInt(safeRead(lockFile), 10);
  const justCreated = Number.isNaN(owner) && ageMs(lockFile) < 1000; // its owner is writing its pid
  if (!justCreated && (!Number.isInteger(owner) || owner <= 0 || !processAlive(owner))) {
    fs.rmSync(lockFile, { force: true });
  }
  return false;
}

function ageMs(file: string): number {
  try {
    return Date.now() - fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function safeRead(file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
