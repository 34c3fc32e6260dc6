import { Buffer } from "node:buffer";
import { createHash, randomBytes } from "node:crypto";

/**
 * Pool keys: `pk1.<tenant>.<id>.<secret>`, the tenant base64url-encoded. Only the secret's
 * SHA-256 is stored (in the tenant's TenantPools object, by id), so a key is checked — and a
 * revoked one refused — by one lookup, and a leaked store holds no usable key.
 */
const PREFIX = "pk1";

export interface PoolKeyParts {
  tenant: string;
  id: string;
  secretHash: string;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

export function looksLikePoolKey(credential: string): boolean {
  return credential.startsWith(`${PREFIX}.`);
}

/** A fresh key for `tenant`: the key to show once, and the parts to store. */
export function newPoolKey(tenant: string): PoolKeyParts & { key: string } {
  const id = randomBytes(10).toString("hex");
  const secret = randomBytes(32).toString("base64url");
  const key = `${PREFIX}.${Buffer.from(tenant, "utf8").toString("base64url")}.${id}.${secret}`;
  return { key, tenant, id, secretHash: sha256(secret) };
}

/** The parts of something shaped like a pool key; null for anything else. Not yet checked against the store. */
export function parsePoolKey(credential: string): PoolKeyParts | null {
  const [prefix, tenantPart, id, secret, ...rest] = credential.split(".");
  if (prefix !== PREFIX || !tenantPart || !id || !secret || rest.length > 0) return null;
  if (!/^[A-Za-z0-9_-]+$/.test(tenantPart) || !/^[a-z0-9]{1,40}$/.test(id) || !/^[A-Za-z0-9_-]{1,100}$/.test(secret)) {
    return null;
  }
  const tenant = Buffer.from(tenantPart, "base64url").toString("utf8");
  return tenant ? { tenant, id, secretHash: sha256(secret) } : null;
}
