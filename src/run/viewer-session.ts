import { isFailure, type ViewerFrame } from "../protocol/index.ts";
import type { RunHost } from "./host.ts";
import { controllerCommand } from "./controller.ts";
import { attachmentOf, send } from "./sockets.ts";

/** Handles one validated frame from a viewer socket: commands and approvals, if allowed. */
export async function handleViewerFrame(host: RunHost, ws: WebSocket, frame: ViewerFrame): Promise<void> {
  const attachment = attachmentOf(ws);
  if (attachment?.role !== "viewer" || !attachment.interact) {
    return send(ws, { type: "error", code: "forbidden", message: "this viewer token cannot send commands" });
  }
  if (frame.type === "command") {
    const result = await host.operate((m) => controllerCommand(m, frame.command));
    if (isFailure(result)) return send(ws, { type: "error", code: result.code, message: result.message });
    if (result.command) send(ws, { type: "commandAccepted", command: result.command });
    return;
  }
  const result = await host.operate((m) => m.resolveApproval(frame.requestId, frame.approval));
  if (isFailure(result)) return send(ws, { type: "error", code: result.code, message: result.message });
  send(ws, { type: "approvalAccepted", approval: result.approval });
}
