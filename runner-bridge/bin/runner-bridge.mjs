#!/usr/bin/env node
// Thin launcher. In a clone it runs the TypeScript sources through Node's built-in type
// stripping; a packed copy ships no sources and runs the bundle in dist/ instead.
import { existsSync } from "node:fs";

// Type stripping (and the built-in WebSocket) need Node 22.18: say so instead of failing on `.ts`.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(
    `runner-bridge: needs Node 22 (22.18 or later); this is Node ${process.versions.node} (${process.execPath})\n`,
  );
  process.exit(1);
}

const sources = new URL("../src/cli.ts", import.meta.url);
const { main } = existsSync(sources) ? await import(sources.href) : await import("../dist/cli.mjs");

process.exit(await main(process.argv.slice(2)));
