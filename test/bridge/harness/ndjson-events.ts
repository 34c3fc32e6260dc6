/**
 * The events the ndjson adapter stores for a scripted agent's lines (docs/ADAPTERS.md): a text line
 * is a TEXT_MESSAGE_CHUNK of the message its run of text lines forms, named after the run's first
 * line; a JSON object with a type of its own is CUSTOM.
 */
export const textLine = (sourceSeq: number, line: string, firstLine = sourceSeq) => ({
  sourceSeq,
  type: "TEXT_MESSAGE_CHUNK",
  data: { messageId: `line-${firstLine}`, role: "assistant", delta: `${line}\n` },
});

export const custom = (sourceSeq: number, name: string, value: Record<string, unknown>) => ({
  sourceSeq,
  type: "CUSTOM",
  data: { name, value },
});

/** The name of a CUSTOM event (or the type of any other), to find the agent's own events. */
export const nameOf = (event: { type: string; data?: unknown }): string =>
  event.type === "CUSTOM" ? String((event.data as { name?: unknown }).name) : event.type;
