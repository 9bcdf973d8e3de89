#!/usr/bin/env node
// Imports the GPU test bundles named on the command line, in order, into THIS process, so that one
// compute-sanitizer run (run-sanitize.mjs) covers a whole kernel family: every run pays the tool's
// start-up and a CUDA context, and the plan has 4 tools × its families of them. node:test queues the
// tests of each bundle as it is imported and runs them in that order; --test-name-pattern (given to
// node) picks the family's cases.
//
//   node --test-reporter=tap --test-name-pattern=... tools/device/sanitize-entry.mjs a.mjs [b.mjs ...]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const bundles = process.argv.slice(2);
if (bundles.length === 0) {
  console.error('sanitize-entry: name the bundles to import');
  process.exit(2);
}
for (const bundle of bundles) await import(pathToFileURL(resolve(bundle)).href);
