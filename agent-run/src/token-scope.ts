/**
 * When the API refuses a run token (`--key rt1.…`), what that token can do instead: it names its
 * run, so the refusal can point at the commands that work with it. The claims are read, not
 * trusted: the server checked the signature already, and this only words a hint.
 */
import { z } from "zod";

const Claims = z.object({ runId: z.string(), role: z.enum(["runner", "viewer"]), interact: z.boolean().optional() });

function claimsOf(key: string): z.infer<typeof Claims> | null {
  const [prefix, body] = key.split(".");
  if (prefix !== "rt1" || body === undefined) return null;
  try {
    const parsed = Claims.safeParse(JSON.parse(Buffer.from(body, "base64url").toString("utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * `; …` to append to a 403's line: when the key is a run token used beyond its run (listing, or
 * another run). "" otherwise: a refusal on the token's own run already says what is missing.
 */
export function tokenScope(key: string | undefined, runArg: string | undefined): string {
  const claims = key === undefined ? null : claimsOf(key);
  if (!claims || (runArg === claims.runId && claims.role === "viewer")) return "";
  const run = claims.runId;
  if (claims.role === "runner") {
    return `; this key is run ${run}'s runner token: it is for runner-bridge only; use an API key (AGENT_RUN_KEY) here`;
  }
  const reads = `get ${run}, events ${run}, watch ${run}`;
  const can = claims.interact ? `${reads}, and send/interrupt/cancel/approve/deny on it` : `${reads} (read-only)`;
  return `; this key is a viewer token for run ${run} alone: it can ${can}; listing runs and other runs need an API key (AGENT_RUN_KEY)`;
}
