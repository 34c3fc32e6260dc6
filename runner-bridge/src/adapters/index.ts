import { claudeCodeAdapter } from "./claude-code.ts";
import { codexAdapter } from "./codex.ts";
import { ndjsonAdapter } from "./ndjson.ts";
import type { RunSpec } from "../rundir.ts";
import type { Adapter } from "./types.ts";

export const ADAPTERS = ["ndjson", "codex", "claude-code"] as const;

export function createAdapter(name: string, spec: Pick<RunSpec, "cwd" | "prompt" | "resume">): Adapter {
  switch (name) {
    case "ndjson":
      return ndjsonAdapter();
    case "codex":
      return codexAdapter(spec);
    case "claude-code":
      return claudeCodeAdapter();
    default:
      throw new Error(`unknown adapter ${name} (one of ${ADAPTERS.join(", ")})`);
  }
}
