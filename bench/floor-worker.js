// The smallest possible worker: every request is a 404, except POST /store, which hands its body to
// a Durable Object that stores it in one INSERT. The bench serves it on each platform (plain
// workerd, wrangler dev) to measure what any request, and the cheapest durable append, cost there
// before our code runs.
import { DurableObject } from "cloudflare:workers";

export class FloorStore extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS bodies (id INTEGER PRIMARY KEY, body BLOB NOT NULL)");
  }

  store(body) {
    this.ctx.storage.sql.exec("INSERT INTO bodies (body) VALUES (?)", body);
    return body.byteLength;
  }
}

export default {
  async fetch(request, env) {
    if (request.method === "POST" && new URL(request.url).pathname === "/store") {
      await env.FLOOR.get(env.FLOOR.idFromName("floor")).store(await request.arrayBuffer());
      return new Response(null, { status: 204 });
    }
    return new Response("not found", { status: 404 });
  },
};
