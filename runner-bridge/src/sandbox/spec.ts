import type { NetworkPolicy } from "./policy.ts";

/**
 * The sandbox of one run as the bridge decided it at launch, kept in the run spec so the
 * supervisor builds the same boundary and an attaching bridge knows where the agent lives.
 */
export interface SandboxSpec {
  /** Absolute path of bwrap, found when the bridge checked that a sandbox can be made here. */
  bwrap: string;
  /** allow: absolute path of socat, which carries the agent's proxy connections out of its network. */
  socat?: string;
  network: NetworkPolicy;
  /** The agent's working directory, read-write. */
  workspace: string;
  /** The agent's own HOME, read-write, never the bridge's (codex and claude keep their session files there). */
  home: string;
  /** More read-write places: CODEX_HOME, CLAUDE_CONFIG_DIR, an ndjson agent's --checkpoint place. */
  writable: string[];
  /** allow: the edge's own address, refused through the proxy unless its host is itself listed. */
  edge?: { host: string; port: number };
  /**
   * Read-only places of the host's /tmp that the private /tmp would hide: what the agent's command
   * names there (hostTmpPlaces). Absent in specs written before it existed.
   */
  readable?: string[];
  /** Not visible inside, except for the read-write places within them (a pool's root of runs). */
  hiddenRoots: string[];
  /** Not visible inside at all, even within a read-write place: the run directory, host credential files. */
  hidden: string[];
}

/** Inside the sandbox the proxy listens here (the sandbox's own loopback). */
export const PROXY_PORT = 3128;
/** Where the proxy's socket appears inside (on the sandbox's private /tmp). */
export const PROXY_SOCKET_INSIDE = "/tmp/.runner-bridge-proxy.sock";
