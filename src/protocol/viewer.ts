import { z } from "zod";
import { ApprovalBody, CommandBody } from "./http.ts";
import type { ApprovalRecord, CommandRecord, RunEvent, RunStatus } from "./run.ts";

/** Frames a viewer may send; only viewers whose token allows interaction. */
export const ViewerFrame = z.discriminatedUnion("type", [
  z.object({ type: z.literal("command"), command: CommandBody }).strict(),
  z.object({ type: z.literal("approval"), requestId: z.string().min(1).max(200), approval: ApprovalBody }).strict(),
]);
export type ViewerFrame = z.infer<typeof ViewerFrame>;

/** Frames the object sends to viewers. */
export type ServerToViewer =
  | { type: "events"; events: RunEvent[] }
  | { type: "status"; status: RunStatus }
  | { type: "end"; status: RunStatus }
  | { type: "commandAccepted"; command: CommandRecord }
  | { type: "approvalAccepted"; approval: ApprovalRecord }
  | { type: "error"; code: string; message: string };
