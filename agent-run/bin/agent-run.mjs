#!/usr/bin/env node
// Thin launcher: runs the TypeScript sources through Node's built-in type stripping (Node >= 22.18).
import { main } from "../src/cli.ts";

process.exit(await main(process.argv.slice(2)));
