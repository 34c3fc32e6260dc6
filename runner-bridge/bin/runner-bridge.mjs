#!/usr/bin/env node
// Thin launcher. In a clone it runs the TypeScript sources through Node's built-in type
// stripping; a packed copy ships no sources and runs the bundle in dist/ instead.
import { existsSync } from "node:fs";

const sources = new URL("../src/cli.ts", import.meta.url);
const { main } = existsSync(sources) ? await import(sources.href) : await import("../dist/cli.mjs");

process.exit(await main(process.argv.slice(2)));
