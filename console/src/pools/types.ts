/** The pool fields the console reads (src/protocol/pool-api.ts on the edge), as plain types. */
export interface HostRun {
  runId: string;
  assignmentId: string;
  generation: number;
  state: string;
}

export interface PoolHostInfo {
  hostId: string;
  queue: string;
  keyId: string;
  profiles: string[];
  labels: string[];
  slots: number;
  freeSlots: number;
  connectedAt: string;
  runs: HostRun[];
}

export interface QueueInfo {
  name: string;
  maxConcurrent: number | null;
  assignMs: number;
  depth: number;
  running: number;
  hosts: number;
  freeSlots: number;
}

/** A run record's pool fields; all null for a run started by hand. */
export interface Placement {
  queue?: string | null;
  poolHost?: string | null;
  queuePosition?: number | null;
  dispatch?: { state: string; reason: string | null } | null;
  recoveryPolicy?: { mode: string; maxRecoveries: number; automaticRecoveries: number } | null;
}
