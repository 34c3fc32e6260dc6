#!/usr/bin/env node
// Thin launcher: the CLI is TypeScript, run by Node's built-in type stripping.
import { main } from "../src/cli.ts";

process.exit(await main(process.argv.slice(2)));
