import { z } from "zod";
import { tenantForKey } from "../auth/api-keys.ts";
import { apiRouter, jsonResponse, rawRoute } from "./api-route.ts";

/**
 * The development sign-in hint the console's sign-in page shows: which API key the local dev
 * tenant uses. It answers only when all of these hold, so a deployment never tells:
 * - `DEV_SIGN_IN_KEY` is set, which only .dev.vars does (wrangler dev, `npm run serve -- --dev`;
 *   never wrangler.toml, whose [vars] deploy);
 * - that key is one of API_KEYS (a stale hint names no key);
 * - the request came to a loopback host (localhost, 127.0.0.1, [::1]).
 * Anything else answers `{key: null}` (not a 404: every sign-in page asks, and a refusal would
 * be an error in the browser's console of every deployment).
 */
export const devSignIn = apiRouter();

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

export const DevSignIn = z
  .object({ key: z.union([z.string(), z.null()]), tenant: z.union([z.string(), z.null()]) })
  .meta({ id: "DevSignIn", description: "The local dev tenant's API key, or nulls where there is none to tell" });

rawRoute(
  devSignIn,
  {
    method: "get",
    path: "/v1/dev/sign-in",
    tags: ["reference"],
    summary: "Development only: the dev tenant's API key, for the console's sign-in page",
    description:
      "Names a key only on a loopback host with `DEV_SIGN_IN_KEY` set (.dev.vars) to one of `API_KEYS`; a deployment answers `{key: null, tenant: null}`.",
    access: { security: [], refusals: [] },
    responses: { 200: jsonResponse(DevSignIn, "The key to sign in with, or nulls") },
    refusals: [],
  },
  (c) => {
    const key = c.env.DEV_SIGN_IN_KEY;
    const tenant = key ? tenantForKey(c.env.API_KEYS, key) : null;
    if (!key || !tenant || !LOOPBACK.has(new URL(c.req.url).hostname)) {
      return c.json({ key: null, tenant: null }, 200);
    }
    return c.json({ key, tenant }, 200);
  },
);
