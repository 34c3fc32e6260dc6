/**
 * The agent's OS sandbox (docs/SANDBOX.md). `run` and `resume` take it from their flags; a pool
 * passes its profile's fields as the same flags to the `run`/`resume` child it starts.
 */
export { requireSandboxTools } from "./check.ts";
export { CREDENTIAL_DIRS, CREDENTIAL_FILES } from "./credentials.ts";
export { agentHome, agentWorkspace, planSandbox, type SandboxLaunchContext } from "./plan.ts";
export {
  formatNetwork,
  type NetworkPolicy,
  parseNetwork,
  type SandboxFields,
  type SandboxMode,
  type SandboxOptions,
  sandboxArgv,
  sandboxOptions,
} from "./policy.ts";
export type { SandboxSpec } from "./spec.ts";
