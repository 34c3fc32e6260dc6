import type { z } from "zod";
import {
  CLOSE_CREDENTIAL,
  fail,
  invalid,
  MAX_FRAME_BYTES,
  ok,
  parseJson,
  parseRunnerFrameText,
  type Result,
  type RunnerFrame,
  ViewerFrame,
} from "../../protocol/index.ts";
import type { RunHost } from "../host.ts";
import { handleRunnerFrame } from "./runner-session.ts";
import { closeSocket, sendFailure } from "./run-sockets.ts";
import { handleViewerFrame } from "./viewer-session.ts";

const decoder = new TextDecoder();

/** A message's size in bytes; text short enough to fit even at 3 bytes per UTF-16 unit is not encoded. */
function byteLength(message: string | ArrayBuffer): number {
  if (typeof message !== "string") return message.byteLength;
  return message.length * 3 <= MAX_FRAME_BYTES ? message.length : new TextEncoder().encode(message).byteLength;
}

/** One socket message as a frame of `schema`: refused when too large, not JSON, too deep or invalid. */
export function parseFrame<S extends z.ZodType>(message: string | ArrayBuffer, schema: S): Result<z.infer<S>> {
  if (byteLength(message) > MAX_FRAME_BYTES)
    return fail("payload_too_large", `frames are limited to ${MAX_FRAME_BYTES} bytes`);
  const json = parseJson(typeof message === "string" ? message : decoder.decode(message), "invalid_frame");
  if (!json.ok) return json;
  const frame = schema.safeParse(json.value);
  return frame.success ? ok(frame.data) : invalid("invalid_frame", frame.error);
}

/** A runner socket's message as a frame (parseRunnerFrameText), refused first when too large. */
export function parseRunnerFrame(message: string | ArrayBuffer): Result<RunnerFrame> {
  if (byteLength(message) > MAX_FRAME_BYTES)
    return fail("payload_too_large", `frames are limited to ${MAX_FRAME_BYTES} bytes`);
  return parseRunnerFrameText(typeof message === "string" ? message : decoder.decode(message));
}

/**
 * Handles one message from a runner or viewer socket of the run. Every frame gets an answer: a
 * refusal is an error frame, and so, as a last resort, is a failure nobody expected. That one
 * stores nothing either, since a throw inside an operation rolls its transaction back.
 */
export async function handleSocketMessage(host: RunHost, ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
  try {
    await dispatch(host, ws, message);
  } catch (error) {
    console.error("socket frame failed", error);
    sendFailure(ws, fail("internal", "the frame could not be handled; nothing it carried was stored"));
  }
}

async function dispatch(host: RunHost, ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
  const attachment = host.sockets.attachmentOf(ws);
  // The socket's token is checked again on every frame: once revoked or expired, it acts no more.
  const token = attachment?.token;
  if (token) {
    const valid = host.checkToken(token);
    if (!valid.ok) {
      sendFailure(ws, valid);
      return closeSocket(ws, CLOSE_CREDENTIAL, valid.code === "token_revoked" ? "token revoked" : "token expired");
    }
  }
  if (attachment?.role === "runner") {
    const frame = parseRunnerFrame(message);
    if (!frame.ok) return sendFailure(ws, frame);
    // Sockets accepted before generations existed carry none: they served generation 1.
    const claim = { epoch: attachment.epoch, generation: attachment.generation ?? 1 };
    return handleRunnerFrame(host, ws, claim, frame.value);
  }
  const frame = parseFrame(message, ViewerFrame);
  if (!frame.ok) return sendFailure(ws, frame);
  return handleViewerFrame(host, ws, attachment?.role === "viewer" && attachment.interact, frame.value);
}
