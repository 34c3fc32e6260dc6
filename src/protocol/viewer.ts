import { z } from "zod";
import { ErrorCode } from "./errors.ts";
import { ApprovalBody, CommandBody } from "./http.ts";
import { ApprovalRecord, CommandRecord, RunEvent } from "./records.ts";
import { RunStatus } from "./run.ts";

/**
 * Frames a viewer may send: `ack` (any viewer: the last seq it holds, which bounds its backlog),
 * and commands and approvals from viewers whose token allows interaction.
 */
export const ViewerFrame = z
  .discriminatedUnion("type", [
    z.object({ type: z.literal("ack"), seq: z.number().int().min(0) }).strict(),
    z.object({ type: z.literal("command"), command: CommandBody }).strict(),
    z.object({ type: z.literal("approval"), requestId: z.string().min(1).max(200), approval: ApprovalBody }).strict(),
  ])
  .meta({
    id: "ViewerFrame",
    description: "A frame a viewer sends (commands and approvals: interacting viewers only)",
  });
export type ViewerFrame = z.infer<typeof ViewerFrame>;

/**
 * Frames the object sends to viewers. Not strict, like the runner's: a viewer ignores fields it
 * does not know.
 */
export const ServerToViewer = z
  .discriminatedUnion("type", [
    z.object({ type: z.literal("events"), events: z.array(RunEvent) }),
    z.object({ type: z.literal("status"), status: RunStatus }),
    z.object({ type: z.literal("end"), status: RunStatus }),
    z.object({ type: z.literal("commandAccepted"), command: CommandRecord }),
    z.object({ type: z.literal("approvalAccepted"), approval: ApprovalRecord }),
    z.object({ type: z.literal("error"), code: ErrorCode, message: z.string() }),
  ])
  .meta({ id: "ServerToViewer", description: "A frame the run's object sends to a viewer" });
export type ServerToViewer = z.infer<typeof ServerToViewer>;
