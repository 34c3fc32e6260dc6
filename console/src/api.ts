import { Client } from "@agent-run/client";
import type {
  ApprovalAccepted,
  ApprovalBody,
  ApprovalRecord,
  CancelAccepted,
  CancelBody,
  CommandAccepted,
  CommandBody,
  CreatedRun,
  EventsPage,
  MintedToken,
  PoolHostInfo,
  QueueInfo,
  RecoverAccepted,
  RecoverBody,
  RunEvent,
  RunRecord,
  RunReruns,
  RunStatus,
  RunsPage,
  TokenBody,
} from "../../src/protocol/index.ts";
import type { Credential } from "./session.ts";

export type { EventsPage, RunListing, RunsPage } from "../../src/protocol/index.ts";

export { ApiError } from "@agent-run/client";

const PAGE = 500;

/**
 * The SDK's typed calls as the console uses them, with one credential against the origin that
 * served the console. The console's own part is the call shapes its pages pass.
 */
export class Api {
  readonly credential: Credential;
  readonly client: Client;
  constructor(credential: Credential) {
    this.credential = credential;
    this.client = new Client({ url: globalThis.location.origin, key: credential.secret });
  }

  listRuns(query: {
    status?: string;
    tags?: string[];
    meta?: [string, string][];
    createdAfter?: string;
    createdBefore?: string;
    cursor?: string;
    limit: number;
  }): Promise<RunsPage> {
    const { tags, meta, status, ...rest } = query;
    return this.client.listRuns({
      ...rest,
      ...(status ? { status: status as RunStatus } : {}),
      ...(tags ? { tag: tags } : {}),
      ...(meta ? { meta: Object.fromEntries(meta) } : {}),
    });
  }

  getRun(runId: string): Promise<RunRecord> {
    return this.client.getRun(runId);
  }

  events(runId: string, after: number, limit: number): Promise<EventsPage> {
    return this.client.events(runId, { after, limit });
  }

  command(runId: string, body: CommandBody): Promise<CommandAccepted> {
    return this.client.command(runId, body);
  }

  approve(runId: string, requestId: string, body: ApprovalBody): Promise<ApprovalAccepted> {
    return this.client.approve(runId, requestId, body);
  }

  /** One approval with its full request (the run record's summaries leave large ones out). */
  approval(runId: string, requestId: string): Promise<ApprovalRecord> {
    return this.client.getApproval(runId, requestId);
  }

  cancel(runId: string, body: CancelBody): Promise<CancelAccepted> {
    return this.client.cancel(runId, body);
  }

  recover(runId: string, body: RecoverBody): Promise<RecoverAccepted> {
    return this.client.recover(runId, body);
  }

  rerun(runId: string): Promise<CreatedRun> {
    return this.client.rerun(runId);
  }

  reruns(runId: string): Promise<RunReruns> {
    return this.client.reruns(runId);
  }

  mintToken(runId: string, body: TokenBody): Promise<MintedToken> {
    return this.client.mintToken(runId, body);
  }

  /** The tenant's connected pool hosts (API key only). */
  pools(): Promise<{ hosts: PoolHostInfo[] }> {
    return this.client.pools();
  }

  queues(): Promise<{ queues: QueueInfo[] }> {
    return this.client.queues();
  }

  /** Every event of the run, a page at a time (for the NDJSON download). */
  async *allEvents(runId: string): AsyncGenerator<RunEvent[]> {
    let after = 0;
    for (;;) {
      const page = await this.events(runId, after, PAGE);
      if (page.events.length > 0) yield page.events;
      if (!page.hasMore) return;
      after = page.nextAfter;
    }
  }
}

/** A fresh id for a command, so a retried click never runs it twice. */
export function newCommandId(prefix: string): string {
  const random =
    typeof crypto.randomUUID === "function"
      ? crypto.randomUUID()
      : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  return `console-${prefix}-${random}`;
}
