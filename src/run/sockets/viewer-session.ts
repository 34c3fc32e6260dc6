import type { ViewerFrame } from "../../protocol/index.ts";
import { controllerCommand } from "../controller.ts";
import type { RunHost } from "../host.ts";
import { send, sendFailure } from "./run-sockets.ts";

/** Handles one validated frame from a viewer socket: commands and approvals, if it may interact. */
export async function handleViewerFrame(
  host: RunHost,
  ws: WebSocket,
  interact: boolean,
  frame: ViewerFrame,
): Promise<void> {
  if (frame.type === "ack") {
    // Any viewer may say how far it has read; that is what bounds its backlog (viewer-flow.ts).
    const position = host.read((m) => {
      const tail = m.log.state().tail;
      return frame.seq >= tail.seq ? tail : m.log.position(frame.seq);
    });
    if (position.ok && position.value) host.sockets.flows.ack(ws, position.value.pos);
    return;
  }
  if (!interact) {
    return send(ws, { type: "error", code: "forbidden", message: "this viewer token cannot send commands" });
  }
  if (frame.type === "command") {
    const result = await host.operate((m) => controllerCommand(m, frame.command));
    if (!result.ok) return sendFailure(ws, result);
    if (result.value.command) send(ws, { type: "commandAccepted", command: result.value.command });
    return;
  }
  const result = await host.operate((m) => m.approvals.resolve(frame.requestId, frame.approval));
  if (!result.ok) return sendFailure(ws, result);
  send(ws, { type: "approvalAccepted", approval: result.value.approval });
}
