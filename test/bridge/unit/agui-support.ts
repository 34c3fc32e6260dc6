import fs from "node:fs";
import path from "node:path";
import { HttpAgent, type Message } from "@ag-ui/client";
import { EventSchema } from "@ag-ui/core/schemas";
import { z } from "zod";
import type { AgentEvent } from "../../../runner-bridge/src/adapters/types.ts";
import { FIXTURES } from "../harness/bridge.ts";

/** The stdout lines of a recorded real session (test/bridge/fixtures/recorded). */
export function recordedLines(name: string): string[] {
  const text = fs.readFileSync(path.join(FIXTURES, "recorded", `${name}.ndjson`), "utf8");
  return text.split("\n").filter((line) => line.length > 0);
}

/** A stored `{type, data}` as the AG-UI event it stands for. */
export const asAgUi = (event: AgentEvent): Record<string, unknown> => ({ type: event.type, ...(event.data as object) });

const OWN_SCHEMAS: Record<string, z.ZodType> = {
  "approval.requested": z.looseObject({ requestId: z.string().min(1) }),
  "agent.session": z.looseObject({ provider: z.string().min(1), id: z.string().min(1) }),
};

/** Fails naming the first event that is neither a valid AG-UI event (@ag-ui/core) nor one of ours. */
export function expectValidEvents(events: AgentEvent[]): void {
  events.forEach((event, i) => {
    const own = OWN_SCHEMAS[event.type];
    const result = own ? own.safeParse(event.data) : EventSchema.safeParse(asAgUi(event));
    if (!result.success) {
      const shown = JSON.stringify(event).slice(0, 400);
      throw new Error(`event ${i + 1} (${event.type}) is invalid: ${z.prettifyError(result.error)}\n${shown}`);
    }
  });
}

/** The native message each event carries (RAW's `event`, everything else's `rawEvent`). */
export function nativeOf(event: AgentEvent): unknown {
  const data = event.data as { rawEvent?: unknown; event?: unknown };
  return event.type === "RAW" ? data.event : data.rawEvent;
}

/**
 * What a consumer does before handing a run's agent events to a strict AG-UI client
 * (docs/ADAPTERS.md, "Feeding an AG-UI client"): our own event types stay out; RAW outside a
 * turn stays out; a turn that does not open with RUN_STARTED (a claude-code turn opens with
 * agent.session) gets one, on the thread of the last agent.session.
 */
export function toClientStream(events: AgentEvent[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let thread = "thread";
  let open = false;
  let turns = 0;
  for (const event of events) {
    if (event.type === "agent.session") thread = (event.data as { id: string }).id;
    if (event.type === "agent.session" || event.type === "approval.requested") continue;
    if (event.type === "RUN_STARTED") open = true;
    else if (!open && event.type === "RAW") continue;
    else if (!open) {
      out.push({ type: "RUN_STARTED", threadId: thread, runId: `${thread}:turn-${++turns}` });
      open = true;
    }
    out.push(asAgUi(event));
    if (event.type === "RUN_FINISHED" || event.type === "RUN_ERROR") open = false;
  }
  return out;
}

/**
 * Runs the events through the real `@ag-ui/client` (an HttpAgent reading them as a server-sent
 * event stream: event verification, chunk expansion, message assembly) and returns the
 * conversation it assembled, plus anything it warned about.
 */
export async function renderWithAgUiClient(
  stream: Record<string, unknown>[],
): Promise<{ messages: Message[]; warnings: string[]; errors: string[] }> {
  const body = stream.map((event) => `data: ${JSON.stringify(event)}\n\n`).join("");
  const agent = new HttpAgent({
    url: "http://agui.invalid/run",
    fetch: async () => new Response(body, { headers: { "content-type": "text/event-stream" } }),
  });
  const warnings: string[] = [];
  const errors: string[] = [];
  const warn = console.warn;
  const error = console.error;
  console.warn = (...args: unknown[]) => warnings.push(args.map(String).join(" "));
  console.error = (...args: unknown[]) => errors.push(args.map(String).join(" "));
  try {
    await agent.runAgent();
  } catch (err) {
    errors.push(String(err));
  } finally {
    console.warn = warn;
    console.error = error;
  }
  return { messages: agent.messages, warnings, errors };
}
