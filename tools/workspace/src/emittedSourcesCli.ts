// The manifest of emitted kernel sources (npm run sources:manifest):
//   npm run sources:manifest                 print the instance count per catalog and target
//   npm run sources:manifest -- --write      rewrite tools/workspace/emitted-sources.sha256.json
//   npm run sources:manifest -- --check      exit 1 naming the instances whose source changed, appeared or disappeared
// Bad input (an unknown option, both modes) is one line on stderr, exit 2.
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { ArgParseError, runCommand, type CliIo } from '@tilekit/host';
import { catalogSummary, duplicateKeys, emittedSources } from './emittedSources.ts';
import {
  describeManifestDiff,
  diffManifests,
  EMITTED_SOURCES_MANIFEST,
  formatManifest,
  manifestsAgree,
  readManifest,
} from './emittedSourcesManifest.ts';

const USAGE = 'usage: emittedSourcesCli.ts [--write | --check]';
const shown = relative(process.cwd(), EMITTED_SOURCES_MANIFEST) || EMITTED_SOURCES_MANIFEST;

function write(io: CliIo): number {
  const entries = emittedSources();
  const duplicates = duplicateKeys(entries);
  if (duplicates.length > 0) {
    io.stderr(`instances share a name on one target, the manifest cannot tell them apart: ${duplicates.join(', ')}\n`);
    return 1;
  }
  writeFileSync(EMITTED_SOURCES_MANIFEST, formatManifest(entries));
  io.stdout(`${shown}: ${entries.length} instances written\n`);
  return 0;
}

function check(io: CliIo): number {
  const entries = emittedSources();
  const diff = diffManifests(readManifest(), entries);
  if (!manifestsAgree(diff)) {
    io.stderr(`${describeManifestDiff(diff)}\n`);
    return 1;
  }
  io.stdout(`${shown}: all ${entries.length} instances emit the committed sources\n`);
  return 0;
}

await runCommand((io) => {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { write: { type: 'boolean' }, check: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help === true) return void io.stdout(`${USAGE}\n`);
  if (values.write === true && values.check === true) throw new ArgParseError('--check', `give --write or --check, not both (${USAGE})`);
  if (values.write === true) return write(io);
  if (values.check === true) return check(io);
  io.stdout(`${catalogSummary().join('\n')}\n`);
  return 0;
});
