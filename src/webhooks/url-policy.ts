import { fail, MAX_WEBHOOK_URL_CHARS, ok, type Result } from "../protocol/index.ts";

/** Hosts that are this machine: the only ones an http: endpoint may name, and only in development. */
function isLoopback(hostname: string): boolean {
  if (hostname === "localhost" || hostname === "[::1]") return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * Whether `url` may be an endpoint: https:, or http: to a loopback host when `allowHttp`
 * (ALLOW_HTTP_WEBHOOKS=true, set in .dev.vars and never for a deployment). No credentials in it,
 * no fragment. Answers the URL as it will be called.
 */
export function checkWebhookUrl(text: string, allowHttp: boolean): Result<string> {
  if (!URL.canParse(text)) return fail("invalid_webhook_url", "the url is not an absolute URL");
  const url = new URL(text);
  if (url.href.length > MAX_WEBHOOK_URL_CHARS) {
    return fail("invalid_webhook_url", `the url is longer than ${MAX_WEBHOOK_URL_CHARS} characters`);
  }
  if (url.username !== "" || url.password !== "") {
    return fail("invalid_webhook_url", "the url may not carry credentials; the signature authenticates us");
  }
  if (url.hash !== "") return fail("invalid_webhook_url", "the url may not have a fragment");
  if (url.protocol === "https:") return ok(url.href);
  if (url.protocol !== "http:") return fail("invalid_webhook_url", `${url.protocol} is not https:`);
  if (!allowHttp) {
    return fail(
      "invalid_webhook_url",
      "endpoints must be https: (http: only to loopback, with ALLOW_HTTP_WEBHOOKS=true)",
    );
  }
  if (!isLoopback(url.hostname)) {
    return fail("invalid_webhook_url", `http: is allowed only to loopback hosts, not ${url.hostname}`);
  }
  return ok(url.href);
}
