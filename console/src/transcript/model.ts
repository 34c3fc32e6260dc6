import { type Category, CATEGORY_IDS, inline, type Row } from "@agent-run/client/transcript";
import { nativeLabel, nativeOf } from "./native.ts";

// The console renders the SDK's transcript fold; what is its own is how rows are filtered and searched.
export type {
  ApprovalLink,
  Category,
  EventRow,
  MessageRow,
  ReasoningRow,
  Row,
  ToolRow,
} from "@agent-run/client/transcript";
export { Transcript } from "@agent-run/client/transcript";

const LABELS: Record<Category, string> = {
  messages: "Messages",
  tools: "Tools",
  errors: "Errors",
  approvals: "Approvals",
  control: "Control",
  other: "Other",
};
export const CATEGORIES: readonly { id: Category; label: string }[] = CATEGORY_IDS.map((id) => ({
  id,
  label: LABELS[id],
}));

const searchCache = new WeakMap<Row, { version: number; text: string }>();

/** Lower-cased text a search matches against: what the row shows, plus its event types. */
export function searchText(row: Row): string {
  const cached = searchCache.get(row);
  if (cached && cached.version === row.version) return cached.text;
  let body: string;
  switch (row.kind) {
    case "message":
      body = `${row.role} ${row.text}`;
      break;
    case "reasoning":
      body = `reasoning ${row.text}`;
      break;
    case "tool":
      body = `${row.name ?? "tool"} ${row.toolCallId} ${row.args} ${row.result ?? ""} ${row.approval?.requestId ?? ""}`;
      break;
    case "raw":
      body = `${row.event.type} ${nativeLabel(nativeOf(row.event))} ${inline(row.event.data)}`;
      break;
    default:
      body = `${row.event.type} ${inline(row.event.data)}`;
  }
  const value = `${body} ${row.events[0]?.type ?? ""}`.toLowerCase();
  searchCache.set(row, { version: row.version, text: value });
  return value;
}

export function rowMatches(row: Row, categories: ReadonlySet<Category>, query: string): boolean {
  if (!categories.has(row.category)) return false;
  return query === "" || searchText(row).includes(query);
}
