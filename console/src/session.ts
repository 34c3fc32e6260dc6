/**
 * The claims segment of a run token (`rt1.<claims>.<signature>`, see src/auth/tokens.ts, which
 * this bundle cannot import: it is Workers code). Read only to shape the UI; the server verifies.
 */
export interface TokenClaims {
  tenant: string;
  runId: string;
  role: "runner" | "viewer" | string;
  interact: boolean;
  exp: number;
}

/**
 * Who the console acts as: an API key the operator typed (kept in sessionStorage, never in a
 * URL), or a run token from a share link's fragment (`#token=…`, which no server ever sees).
 */
export type Credential =
  | { kind: "key"; secret: string }
  | { kind: "token"; secret: string; claims: TokenClaims | null };

const KEY_STORAGE = "agent-run-edge.apiKey";

export function storedKey(): string | null {
  try {
    return sessionStorage.getItem(KEY_STORAGE);
  } catch {
    return null; // storage disabled: the operator signs in again per tab
  }
}

export function storeKey(key: string): void {
  try {
    sessionStorage.setItem(KEY_STORAGE, key);
  } catch {
    // storage disabled: the key lives only as long as this page
  }
}

export function forgetKey(): void {
  try {
    sessionStorage.removeItem(KEY_STORAGE);
  } catch {
    // nothing stored
  }
}

/** The claims of a run token, read without verifying (the server verifies; this only shapes the UI). */
export function readClaims(token: string): TokenClaims | null {
  const body = token.split(".")[1];
  if (!body || !/^[A-Za-z0-9_-]+$/.test(body)) return null;
  try {
    const json = atob(body.replaceAll("-", "+").replaceAll("_", "/"));
    const claims = JSON.parse(json) as Partial<TokenClaims>;
    if (typeof claims.runId !== "string" || typeof claims.role !== "string" || typeof claims.exp !== "number") {
      return null;
    }
    return {
      tenant: String(claims.tenant ?? ""),
      runId: claims.runId,
      role: claims.role,
      interact: claims.interact === true,
      exp: claims.exp,
    };
  } catch {
    return null;
  }
}

export interface Fragment {
  token: string | null;
  seq: number | null;
}

/** `#token=…&seq=123`: a share link's token and an event permalink. */
export function readFragment(hash: string = location.hash): Fragment {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const seqText = params.get("seq");
  const seq = seqText !== null && /^\d+$/.test(seqText) ? Number(seqText) : null;
  return { token: params.get("token") || null, seq: seq !== null && seq > 0 ? seq : null };
}

export function writeFragment(fragment: Fragment): string {
  const params = new URLSearchParams();
  if (fragment.token) params.set("token", fragment.token);
  if (fragment.seq !== null) params.set("seq", String(fragment.seq));
  const text = params.toString();
  return text ? `#${text}` : "";
}

/** The credential for this page: a share link's token wins over a stored key. */
export function currentCredential(): Credential | null {
  const { token } = readFragment();
  if (token) return { kind: "token", secret: token, claims: readClaims(token) };
  const key = storedKey();
  return key ? { kind: "key", secret: key } : null;
}

/** What a credential may do on a run: see it, steer it, share it. */
export interface Abilities {
  interact: boolean;
  share: boolean;
  listRuns: boolean;
}

export function abilities(credential: Credential): Abilities {
  if (credential.kind === "key") return { interact: true, share: true, listRuns: true };
  return {
    interact: credential.claims?.role === "viewer" && credential.claims.interact,
    share: false,
    listRuns: false,
  };
}

/** A problem with a share-link token that is visible before asking the server. */
export function tokenProblem(credential: Credential, runId: string, now = Date.now()): string | null {
  if (credential.kind !== "token") return null;
  const claims = credential.claims;
  if (!claims) return "This link's token is not readable. Ask for a new share link, or sign in with an API key.";
  if (claims.role !== "viewer") return "This link carries a runner token, which cannot open the console.";
  if (claims.exp <= now) return "This share link has expired. Ask for a new one, or sign in with an API key.";
  if (claims.runId !== runId) return `This share link is for run ${claims.runId}, not ${runId}.`;
  return null;
}
