/**
 * How the worker hands a WebSocket upgrade to the run's object: which role the socket plays and,
 * for viewers, where the replay starts and whether they may send commands. The worker has already
 * checked the credential; these headers are set by it alone (the client's are not forwarded).
 */
export type SocketRequest = { role: "runner" } | { role: "viewer"; after: number; interact: boolean };

export function socketUpgradeRequest(url: string, socket: SocketRequest): Request {
  const headers = new Headers({ upgrade: "websocket", "x-socket-role": socket.role });
  if (socket.role === "viewer") {
    headers.set("x-viewer-after", String(socket.after));
    headers.set("x-viewer-interact", String(socket.interact));
  }
  return new Request(url, { headers });
}

export function readSocketRequest(request: Request): SocketRequest {
  if (request.headers.get("x-socket-role") === "runner") return { role: "runner" };
  return {
    role: "viewer",
    after: Number(request.headers.get("x-viewer-after") ?? "0"),
    interact: request.headers.get("x-viewer-interact") === "true",
  };
}
