// Bench-only instrumentation for `npm run serve -- --meter`; never for production. Wraps the
// bundle so the bench can read what Cloudflare bills, counted rather than guessed:
// - worker invocations (requests), and per Durable Object class: calls into objects (RPC and
//   fetch, counted at the stub), WebSocket messages received, alarms, the distinct objects
//   touched, and active time (wall time during which an object had a call, message or alarm in
//   progress, per object, intervals merged);
// - SQLite statements and rows read/written per class, from each cursor's own rowsRead and
//   rowsWritten (what Cloudflare bills), each object's database size (`sql.databaseSize`, read
//   before each statement, so it lags by one), alarm reads and writes, WebSocket messages sent.
// GET /__meter answers the counts as JSON; POST /__meter/reset zeroes them.

let counts = fresh();
function fresh() {
  return { worker: { requests: 0, activeMs: 0, byRoute: {} }, classes: {}, webSocketSends: 0 };
}

function classCounts(name) {
  counts.classes[name] ??= {
    calls: 0,
    byMethod: {},
    webSocketMessages: 0,
    webSocketCloses: 0,
    alarms: 0,
    activeMs: 0,
    objects: new Set(),
    sql: { statements: 0, rowsRead: 0, rowsWritten: 0 },
    storage: { getAlarm: 0, setAlarm: 0, deleteAlarm: 0, transactions: 0 },
  };
  return counts.classes[name];
}

// ---- active time: per object, from the first call in progress to the last one ending ----
const inFlight = new Map(); // object key → { n, since }
function enter(className, key) {
  classCounts(className).objects.add(key);
  const entry = inFlight.get(key);
  if (entry) entry.n += 1;
  else inFlight.set(key, { n: 1, since: performance.now() });
}
function leave(className, key) {
  const entry = inFlight.get(key);
  if (!entry) return;
  entry.n -= 1;
  if (entry.n === 0) {
    classCounts(className).activeMs += performance.now() - entry.since;
    inFlight.delete(key);
  }
}
function track(className, key, run) {
  enter(className, key);
  let result;
  try {
    result = run();
  } catch (error) {
    leave(className, key);
    throw error;
  }
  Promise.resolve(result).then(
    () => leave(className, key),
    () => leave(className, key),
  );
  return result;
}

// ---- SQLite and alarm storage: prototypes patched once, attributed by instance ----
const ownerOf = new WeakMap(); // SqlStorage or DurableObjectStorage → { className, key }
const sizes = new Map(); // object key → { className, bytes }
let pendingCursors = [];
function foldCursors() {
  for (const { cursor, className } of pendingCursors) {
    const sql = classCounts(className).sql;
    sql.rowsRead += cursor.rowsRead;
    sql.rowsWritten += cursor.rowsWritten;
  }
  pendingCursors = [];
}
let patched = false;
function patchStorage(storage, className, key) {
  ownerOf.set(storage, { className, key });
  ownerOf.set(storage.sql, { className, key });
  if (patched) return;
  patched = true;
  const sqlProto = Object.getPrototypeOf(storage.sql);
  const exec = sqlProto.exec;
  sqlProto.exec = function meteredExec(...args) {
    foldCursors(); // earlier cursors have been read by now: their counts are final
    const owner = ownerOf.get(this) ?? { className: "unknown", key: "unknown" };
    classCounts(owner.className).sql.statements += 1;
    sizes.set(owner.key, { className: owner.className, bytes: this.databaseSize });
    const cursor = exec.apply(this, args);
    pendingCursors.push({ cursor, className: owner.className });
    return cursor;
  };
  const storageProto = Object.getPrototypeOf(storage);
  for (const [method, counter] of [
    ["getAlarm", "getAlarm"],
    ["setAlarm", "setAlarm"],
    ["deleteAlarm", "deleteAlarm"],
    ["transactionSync", "transactions"],
    ["transaction", "transactions"],
  ]) {
    const original = storageProto[method];
    if (typeof original !== "function") continue;
    storageProto[method] = function metered(...args) {
      classCounts(ownerOf.get(this)?.className ?? "unknown").storage[counter] += 1;
      return original.apply(this, args);
    };
  }
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function meteredSend(...args) {
    counts.webSocketSends += 1;
    return send.apply(this, args);
  };
}

// ---- calls into objects, counted where they are made ----
function meterStub(stub, className, key) {
  return new Proxy(stub, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof prop !== "string" || typeof value !== "function" || prop === "then") return value;
      return (...args) => {
        const c = classCounts(className);
        c.calls += 1;
        c.byMethod[prop] = (c.byMethod[prop] ?? 0) + 1;
        return track(className, key, () => Reflect.apply(value, target, args));
      };
    },
  });
}

function meterNamespace(namespace, className) {
  return new Proxy(namespace, {
    get(target, prop) {
      if (prop === "get") return (id, ...rest) => meterStub(target.get(id, ...rest), className, id.toString());
      if (prop === "getByName") {
        return (name, ...rest) =>
          meterStub(target.getByName(name, ...rest), className, target.idFromName(name).toString());
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** `bindings`: Durable Object binding name → class name. */
function meterEnv(env, bindings) {
  const metered = { ...env };
  for (const [binding, className] of Object.entries(bindings)) {
    if (env[binding]) metered[binding] = meterNamespace(env[binding], className);
  }
  return metered;
}

export function meterClass(Base, className, bindings) {
  class Metered extends Base {
    constructor(ctx, env) {
      patchStorage(ctx.storage, className, ctx.id.toString());
      super(ctx, meterEnv(env, bindings));
    }
  }
  const handlers = {
    webSocketMessage: "webSocketMessages",
    webSocketClose: "webSocketCloses",
    alarm: "alarms",
  };
  for (const [method, counter] of Object.entries(handlers)) {
    if (typeof Base.prototype[method] !== "function") continue;
    Object.defineProperty(Metered.prototype, method, {
      value(...args) {
        classCounts(className)[counter] += 1;
        return track(className, this.ctx.id.toString(), () => Base.prototype[method].apply(this, args));
      },
    });
  }
  return Metered;
}

function snapshot() {
  foldCursors();
  const classes = {};
  for (const [name, c] of Object.entries(counts.classes)) {
    let databaseBytes = 0;
    for (const size of sizes.values()) if (size.className === name) databaseBytes += size.bytes;
    classes[name] = { ...c, objects: c.objects.size, databaseBytes };
  }
  return { ...counts, classes };
}

export function meterWorker(handler, bindings) {
  return {
    async fetch(request, env, ctx) {
      const { pathname } = new URL(request.url);
      if (pathname === "/__meter") return Response.json(snapshot());
      if (pathname === "/__meter/reset" && request.method === "POST") {
        foldCursors();
        counts = fresh();
        return Response.json({ reset: true });
      }
      counts.worker.requests += 1;
      const upgrade = request.headers.get("upgrade") ? " (upgrade)" : "";
      const route = `${request.method} ${pathname.replace(/^\/v1\/(runs|stream)\/.+?(\/[a-z]+)?$/, "/v1/$1/…$2")}${upgrade}`;
      counts.worker.byRoute[route] = (counts.worker.byRoute[route] ?? 0) + 1;
      const start = performance.now();
      try {
        return await handler.fetch(request, meterEnv(env, bindings), ctx);
      } finally {
        counts.worker.activeMs += performance.now() - start;
      }
    },
  };
}
