#!/usr/bin/env node
// Installs the real agent CLIs the real-binary tests drive (test/agents/package.json, pinned
// exactly by its lockfile) into test/agents/node_modules, once: a stamp of the manifest and the
// lockfile records what was installed, and a later call with the same stamp and both binaries
// present does nothing. Run by `.ci/run` and by npm's `pretest`; never by a test.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const dir = path.dirname(fileURLToPath(import.meta.url));
const modules = path.join(dir, "node_modules");
const stampFile = path.join(modules, ".agents-install-stamp");
const binaries = ["codex", "claude"].map((name) => path.join(modules, ".bin", name));

const hash = createHash("sha256");
for (const file of ["package.json", "package-lock.json"]) hash.update(fs.readFileSync(path.join(dir, file)));
const stamp = hash.digest("hex");

const installed = () => {
  try {
    return fs.readFileSync(stampFile, "utf8").trim() === stamp && binaries.every((bin) => fs.existsSync(bin));
  } catch {
    return false;
  }
};

if (installed()) {
  console.log("test agents: already installed (test/agents/node_modules matches test/agents/package-lock.json)");
  process.exit(0);
}

const started = Date.now();
console.log("test agents: installing @openai/codex and @anthropic-ai/claude-code into test/agents/node_modules …");
const npm = spawnSync("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir, stdio: "inherit" });
if (npm.status !== 0) {
  console.error(`test agents: npm ci failed (${npm.error?.message ?? `exit ${npm.status}`})`);
  process.exit(1);
}
const missing = binaries.filter((bin) => !fs.existsSync(bin));
if (missing.length > 0) {
  console.error(`test agents: npm ci finished but these are missing: ${missing.join(", ")}`);
  process.exit(1);
}
fs.writeFileSync(stampFile, `${stamp}\n`);
console.log(`test agents: installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
