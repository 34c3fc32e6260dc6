import type { SocketCredential } from "./run-sockets.ts";

/**
 * How the worker hands a WebSocket upgrade to the run's object: which role the socket plays and,
 * for viewers, where the replay starts and whether they may send commands. The worker has already
 * checked the credential; these headers are set by it alone (the client's are not forwarded).
 */
export type SocketRequest = ({ role: "runner" } | { role: "viewer"; after: number; interact: boolean }) & {
  /** The run token the socket opens with (its id and expiry), null for an API key. */
  token: SocketCredential;
};

export function socketUpgradeRequest(url: string, socket: SocketRequest): Request {
  const headers = new Headers({ upgrade: "websocket", "x-socket-role": socket.role });
  if (socket.role === "viewer") {
    headers.set("x-viewer-after", String(socket.after));
    headers.set("x-viewer-interact", String(socket.interact));
  }
  if (socket.token) {
    headers.set("x-token-id", socket.token.tokenId ?? "");
    headers.set("x-token-exp", String(socket.token.exp));
  }
  return new Request(url, { headers });
}

export function readSocketRequest(request: Request): SocketRequest {
  const exp = request.headers.get("x-token-exp");
  const token = exp === null ? null : { tokenId: request.headers.get("x-token-id") || null, exp: Number(exp) };
  if (request.headers.get("x-socket-role") === "runner") return { role: "runner", token };
  return {
    role: "viewer",
    after: Number(request.headers.get("x-viewer-after") ?? "0"),
    interact: request.headers.get("x-viewer-interact") === "true",
    token,
  };
}
