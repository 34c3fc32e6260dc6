#!/usr/bin/env node
// Thin launcher: runs the TypeScript sources through Node's built-in type stripping (Node >= 22.18).
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(
    `agent-run: needs Node 22 (22.18 or later); this is Node ${process.versions.node} (${process.execPath})\n`,
  );
  process.exit(1);
}
const { main } = await import("../src/cli.ts");

process.exit(await main(process.argv.slice(2)));
