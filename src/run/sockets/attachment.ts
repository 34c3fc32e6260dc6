import { z } from "zod";

/**
 * What each hibernatable socket remembers across evictions, checked when it is read back: the
 * runtime returns whatever was stored, by this version or an earlier one. `token`: the run token
 * it opened with, re-checked on every frame; absent for an API key (and for sockets opened before
 * tokens had ids, which revoking all of the run's tokens closes too).
 */
const Token = z.object({ tokenId: z.string().nullable(), exp: z.number() }).nullable().optional();

export const SocketAttachment = z.discriminatedUnion("role", [
  z.object({
    role: z.literal("runner"),
    epoch: z.number().int().min(0),
    // Sockets accepted before generations existed carry none: they served generation 1.
    generation: z.number().int().min(1).optional(),
    token: Token,
  }),
  z.object({ role: z.literal("viewer"), interact: z.boolean(), token: Token }),
]);
export type SocketAttachment = z.infer<typeof SocketAttachment>;

/**
 * Each socket's attachment as this object last read or wrote it: read back and checked once, not
 * on every frame (a tenth of a runner frame's fixed cost). One per object instance, so an object
 * woken from hibernation, or from an older version's sockets, reads them from the runtime again.
 */
export class SocketAttachments {
  private readonly known = new WeakMap<WebSocket, Readonly<SocketAttachment> | null>();

  /** The socket's attachment, or null when it has none or one this version cannot read. */
  of(ws: WebSocket): Readonly<SocketAttachment> | null {
    const remembered = this.known.get(ws);
    if (remembered !== undefined) return remembered;
    const read = readAttachment(ws);
    this.known.set(ws, read);
    return read;
  }

  /** Stores the socket's attachment in the runtime, which keeps it across hibernation, and here. */
  set(ws: WebSocket, attachment: SocketAttachment): void {
    ws.serializeAttachment(attachment);
    this.known.set(ws, attachment);
  }
}

function readAttachment(ws: WebSocket): SocketAttachment | null {
  const stored: unknown = ws.deserializeAttachment();
  if (stored === null || stored === undefined) return null;
  const parsed = SocketAttachment.safeParse(stored);
  if (!parsed.success) console.error("unreadable socket attachment", parsed.error.message);
  return parsed.success ? parsed.data : null;
}
