import { mintRunTokens } from "../auth/mint.ts";
import { MintedToken, RevokedToken, RevokedTokens, RunParams, TokenBody, TokenParams } from "../protocol/index.ts";
import { RUN_BY_API_KEY } from "./access.ts";
import { apiRoute, apiRouter, jsonRequest, jsonResponse } from "./api-route.ts";
import { runOf } from "./auth.ts";
import { unwrap } from "./respond.ts";

/** A run's tokens: minting one, revoking one by its id, revoking them all. API keys only. */
export const tokens = apiRouter();
const tags = ["runs"];
const iso = (ms: number) => new Date(ms).toISOString();

apiRoute(
  tokens,
  {
    method: "post",
    path: "/{runId}/tokens",
    tags,
    summary: "Mint a runner or viewer token",
    description:
      "Default lifetimes: viewer 24 h; runner `runMs + takeoverMs + 24 h`. `interact` lets a viewer token send commands; an interacting token lives at most INTERACT_TOKEN_MAX_TTL_MS (default 7 days). The answer names the token's `tokenId`, which revokes it.",
    access: RUN_BY_API_KEY,
    request: { params: RunParams, body: jsonRequest(TokenBody) },
    responses: { 201: jsonResponse(MintedToken, "The token") },
    refusals: ["invalid_json", "invalid_body", "payload_too_large", "not_found", "gone", "too_many_tokens"],
  },
  async (c) => {
    const { tenant, runId } = c.var.run;
    const stub = runOf(c);
    const run = unwrap(await stub.get());
    const [minted] = unwrap(
      await mintRunTokens(c.env, { tenant, runId, stub, timeouts: run.timeouts }, [c.req.valid("json")]),
    );
    if (!minted) throw new Error("minting answered no token");
    return c.json(minted, 201);
  },
);

apiRoute(
  tokens,
  {
    method: "delete",
    path: "/{runId}/tokens",
    tags,
    summary: "Revoke every token of the run",
    description:
      "Every runner and viewer token of the run stops working at once, those minted before tokens had ids included, and every socket a token opened is closed (code 4401). Tokens minted afterwards work.",
    access: RUN_BY_API_KEY,
    request: { params: RunParams },
    responses: { 200: jsonResponse(RevokedTokens, "Revoked") },
    refusals: ["not_found", "gone"],
  },
  async (c) => {
    const { revoked, revokedAt } = unwrap(await runOf(c).revokeAllTokens());
    return c.json({ revoked, revokedAt: iso(revokedAt) }, 200);
  },
);

apiRoute(
  tokens,
  {
    method: "delete",
    path: "/{runId}/tokens/{tokenId}",
    tags,
    summary: "Revoke one token",
    description:
      "The token stops working at once and the sockets it opened are closed (code 4401). Repeating it answers the first revocation; an id the run has no live record of is 404.",
    access: RUN_BY_API_KEY,
    request: { params: TokenParams },
    responses: { 200: jsonResponse(RevokedToken, "Revoked") },
    refusals: ["not_found", "gone"],
  },
  async (c) => {
    const { tokenId } = c.req.valid("param");
    const { revokedAt } = unwrap(await runOf(c).revokeToken(tokenId));
    return c.json({ tokenId, revokedAt: iso(revokedAt) }, 200);
  },
);
