import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The real agent CLIs that test/agents/install.mjs installs (pinned in test/agents/package.json). */
const here = path.dirname(fileURLToPath(import.meta.url));
export const CODEX_BIN = path.join(here, "node_modules", ".bin", "codex");
export const CLAUDE_BIN = path.join(here, "node_modules", ".bin", "claude");

/** Fails, naming the install step, when the real CLIs are missing: a test never installs them. */
export function requireRealAgents(): void {
  const missing = [CODEX_BIN, CLAUDE_BIN].filter((bin) => !fs.existsSync(bin));
  if (missing.length > 0) {
    throw new Error(
      `the real agent CLIs are not installed (${missing.join(", ")}): run \`node test/agents/install.mjs\` ` +
        "(npm test runs it as pretest, .ci/run before the tests)",
    );
  }
}
