// Generated-config companion of `npm run serve` (plain JavaScript: workerd loads it as is).
// Serves the wrangler `[assets]` directory in front of the worker, the way Cloudflare does:
// paths matching `run_worker_first` go straight to the worker; otherwise a file that exists is
// served (`/a` also finds `/a.html` and `/a/index.html`); with `single-page-application` a
// browser navigation that matches no file gets `/index.html`; everything else reaches the worker.
// A `_headers` file in the directory is applied to every asset served, as Cloudflare does (and
// is itself never served): blocks of a path pattern and indented `Name: value` lines.
// Bindings: WORKER (the worker), FILES (a workerd disk service), ROUTES ({runWorkerFirst, notFound}).

const TYPES = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  mjs: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  json: "application/json",
  map: "application/json",
  webmanifest: "application/manifest+json",
  txt: "text/plain; charset=utf-8",
  xml: "application/xml",
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  ico: "image/x-icon",
  woff: "font/woff",
  woff2: "font/woff2",
  ttf: "font/ttf",
  wasm: "application/wasm",
};

const patterns = new Map();
function matches(glob, pathname) {
  let re = patterns.get(glob);
  if (!re) {
    const escaped = glob.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
    re = new RegExp(`^${escaped.join(".*")}$`);
    patterns.set(glob, re);
  }
  return re.test(pathname);
}

/** `true`, or a list of globs where a `!` pattern excludes and wins. */
function workerFirst(rule, pathname) {
  if (rule === true) return true;
  if (!Array.isArray(rule)) return false;
  let included = false;
  for (const glob of rule) {
    if (glob.startsWith("!")) {
      if (matches(glob.slice(1), pathname)) return false;
    } else if (matches(glob, pathname)) included = true;
  }
  return included;
}

/** The `_headers` rules, read once: [{pattern, headers: [[name, value]]}]. */
let headerRules = null;
async function rulesOf(env) {
  if (headerRules) return headerRules;
  const res = await env.FILES.fetch(new Request("http://files/_headers"));
  let text = "";
  if (res.status === 200) text = await res.text();
  else await res.body?.cancel();
  const rules = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "" || line.trim().startsWith("#")) continue;
    if (!/^\s/.test(line)) rules.push({ pattern: line.trim(), headers: [] });
    else {
      const at = line.indexOf(":");
      if (at > 0 && rules.length > 0)
        rules[rules.length - 1].headers.push([line.slice(0, at).trim(), line.slice(at + 1).trim()]);
    }
  }
  headerRules = rules;
  return rules;
}

async function withHeaderRules(env, pathname, response) {
  for (const rule of await rulesOf(env)) {
    if (matches(rule.pattern, pathname)) for (const [name, value] of rule.headers) response.headers.set(name, value);
  }
  return response;
}

async function readFile(env, method, pathname) {
  if (pathname === "/_headers") return null;
  const res = await env.FILES.fetch(new Request(`http://files${pathname}`, { method }));
  // The disk service answers a directory with a JSON listing; only files are octet-stream.
  if (res.status !== 200 || res.headers.get("content-type") !== "application/octet-stream") {
    await res.body?.cancel();
    return null;
  }
  const ext = pathname.slice(pathname.lastIndexOf(".") + 1).toLowerCase();
  const headers = new Headers(res.headers);
  headers.set("content-type", TYPES[ext] ?? "application/octet-stream");
  headers.set("cache-control", "public, max-age=0, must-revalidate");
  return new Response(res.body, { status: 200, headers });
}

/** The asset for this request, or null. */
async function findAsset(request, env) {
  if (request.method !== "GET" && request.method !== "HEAD") return null;
  const { pathname } = new URL(request.url);
  const candidates = pathname.endsWith("/")
    ? [`${pathname}index.html`]
    : [pathname, `${pathname}.html`, `${pathname}/index.html`];
  for (const candidate of candidates) {
    const found = await readFile(env, request.method, candidate);
    if (found) return found;
  }
  return null;
}

function isNavigation(request) {
  const mode = request.headers.get("sec-fetch-mode");
  if (mode) return mode === "navigate";
  return (request.headers.get("accept") ?? "").includes("text/html");
}

export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    if (workerFirst(env.ROUTES.runWorkerFirst, pathname)) return env.WORKER.fetch(request);
    const asset = await findAsset(request, env);
    if (asset) return withHeaderRules(env, pathname, asset);
    if (env.ROUTES.notFound === "single-page-application" && request.method === "GET" && isNavigation(request)) {
      const index = await readFile(env, "GET", "/index.html");
      if (index) return withHeaderRules(env, pathname, index);
    }
    return env.WORKER.fetch(request);
  },
};

/** What the worker's own assets binding (`[assets] binding`) reaches: files only. */
export const Assets = {
  async fetch(request, env) {
    const asset = await findAsset(request, env);
    return asset
      ? withHeaderRules(env, new URL(request.url).pathname, asset)
      : new Response("not found", { status: 404 });
  },
};
