#!/usr/bin/env node
// tilekit-cache [info|prune] [--max-mb N] [--older-than-days N] [--dry-run] [--dir D]
// Inspects or prunes the on-disk kernel cache (libs/runtime/README.md, "Kernel cache"). Runs with
// plain node against the built package (dist/), or in the workspace through
// `tsx --conditions=@tilekit/source`; all the logic is runCacheCli in src/cacheCli.ts.
import { runCacheCli } from '@tilekit/runtime';

process.exitCode = await runCacheCli(process.argv.slice(2));
