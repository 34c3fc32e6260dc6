import { env } from "cloudflare:test";
import fc from "fast-check";
import { signToken } from "../../../src/auth/tokens.ts";
import { call, json, KEY_A, KEY_B } from "../../edge/helpers.ts";
import { nastyString } from "./nasty.ts";

/**
 * Every kind of credential a fuzzed request may carry, by name: keys, this run's tokens, tokens of
 * another run or tenant, expired, tampered, forged or malformed ones.
 */
export const CREDENTIALS = [
  "key-a",
  "key-b",
  "unknown key",
  "none",
  "runner",
  "viewer",
  "interacting viewer",
  "runner of another run",
  "interacting viewer of another run",
  "interacting viewer of another tenant",
  "expired interacting viewer",
  "expired runner",
  "revoked interacting viewer",
  "year-long interacting viewer",
  "tampered",
  "signed with another secret",
  "signed non-claims",
  "signed unknown role",
  "pool key",
  "revoked pool key",
] as const;
export type CredentialName = (typeof CREDENTIALS)[number];

/**
 * A named credential, or raw text sent as it is. Half the time one that gets past authentication
 * (tenant-a's key, this run's interacting viewer), so the inputs reach validation and the run.
 */
export const credential: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.constant("key-a") },
  { weight: 3, arbitrary: fc.constant("interacting viewer") },
  { weight: 8, arbitrary: fc.constantFrom(...CREDENTIALS) },
  { weight: 1, arbitrary: nastyString.map((s) => `raw:${s}`) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }).map((s) => `raw:rt1.${s}`) },
);

/** How the credential travels: mostly as a Bearer header. */
export const carrier = fc.oneof(
  { weight: 8, arbitrary: fc.constant("bearer") },
  { weight: 1, arbitrary: fc.constantFrom("query", "both", "other scheme") },
);

/** The credentials of one run (`runId`, with `otherRunId` another run of tenant-a). */
export async function credentialsFor(
  runId: string,
  otherRunId: string,
  issued: { runnerToken: string; viewerToken: string },
): Promise<Record<CredentialName, string | null>> {
  const secret = env.TOKEN_SECRET;
  const later = Date.now() + 3_600_000;
  const claims = (over: Record<string, unknown>) =>
    signToken(secret, { tenant: "tenant-a", runId, role: "viewer", interact: true, exp: later, ...over } as never);
  const interacting = await claims({});
  const [prefix, body, signature] = interacting.split(".");
  // Pool keys open the pool socket only: on every route fuzzed here they must be refused.
  const mint = async () => json<{ id: string; key: string }>(await call("/v1/pool-keys", { method: "POST" }), 201);
  const poolKey = await mint();
  const revokedPoolKey = await mint();
  await call(`/v1/pool-keys/${revokedPoolKey.id}`, { method: "DELETE" });
  const tokens = `/v1/runs/${runId}/tokens`;
  const revoked = await json(await call(tokens, { method: "POST", json: { role: "viewer", interact: true } }), 201);
  await json(await call(`${tokens}/${revoked.tokenId}`, { method: "DELETE" }), 200);
  return {
    "key-a": KEY_A,
    "key-b": KEY_B,
    "unknown key": "key-zzz",
    none: null,
    runner: issued.runnerToken,
    viewer: issued.viewerToken,
    "interacting viewer": interacting,
    "runner of another run": await claims({ runId: otherRunId, role: "runner", interact: false }),
    "interacting viewer of another run": await claims({ runId: otherRunId }),
    "interacting viewer of another tenant": await claims({ tenant: "tenant-b" }),
    "expired interacting viewer": await claims({ exp: Date.now() - 1 }),
    "expired runner": await claims({ role: "runner", interact: false, exp: Date.now() - 1 }),
    "revoked interacting viewer": revoked.token,
    "year-long interacting viewer": await claims({ exp: Date.now() + 365 * 24 * 3_600_000 }),
    tampered: `${prefix}.${body}.${signature?.startsWith("A") ? "B" : "A"}${signature?.slice(1)}`,
    "signed with another secret": await signToken("not-the-secret", {
      tenant: "tenant-a",
      runId,
      role: "viewer",
      interact: true,
      exp: later,
    }),
    "signed non-claims": await signToken(secret, { nope: true } as never),
    "signed unknown role": await claims({ role: "admin" }),
    "pool key": poolKey.key,
    "revoked pool key": revokedPoolKey.key,
  };
}

/** A header value the client can send without a quirk: printable ASCII. */
export function headerSafe(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, "?");
}

/** Replaces lone surrogates, so the text can be URI-encoded. */
export function wellFormed(text: string): string {
  return text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
}

/** Puts a credential on a request: Authorization header, `?token=`, both, or another scheme. */
export function applyCredential(value: string | null, how: string, headers: Headers, query: URLSearchParams): void {
  if (value === null) return;
  if (how === "bearer" || how === "both") headers.set("authorization", headerSafe(`Bearer ${value}`));
  if (how === "query" || how === "both") query.set("token", wellFormed(value));
  if (how === "other scheme") headers.set("authorization", headerSafe(`Basic ${value}`));
}

export function resolveCredential(name: string, named: Record<CredentialName, string | null>): string | null {
  return name.startsWith("raw:") ? name.slice(4) : named[name as CredentialName];
}
