// The committed manifest of emitted-source hashes (tools/workspace/emitted-sources.sha256.json):
// its file format, and what differs between it and the sources the catalogs emit now.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { entryKey, type EmittedSourceEntry } from './emittedSources.ts';

/** Where the manifest is committed. */
export const EMITTED_SOURCES_MANIFEST = resolve(import.meta.dirname, '..', 'emitted-sources.sha256.json');

/** How to regenerate it, for messages. */
export const WRITE_MANIFEST_COMMAND = 'npm run sources:manifest -- --write';

const ABOUT =
  `sha256 of the source every kernel catalog instance emits per target; checked by ` +
  `tools/workspace/src/emittedSources.spec.ts; regenerate with ${WRITE_MANIFEST_COMMAND} ` +
  `only when a change of emitted source is intended`;

/** The file's text: `{ about, instances }`, two-space JSON, one object per instance, a final newline. */
export function formatManifest(entries: readonly EmittedSourceEntry[]): string {
  const instances = entries.map((e) => ({ name: e.name, target: e.target, sha256: e.sha256 }));
  return `${JSON.stringify({ about: ABOUT, instances }, null, 2)}\n`;
}

function isEntry(value: unknown): value is EmittedSourceEntry {
  const e = value as Partial<Record<keyof EmittedSourceEntry, unknown>> | null;
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof e.name === 'string' &&
    typeof e.target === 'string' &&
    typeof e.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(e.sha256)
  );
}

/** The entries of a manifest's text. @throws Error when the text is not a manifest. */
export function parseManifest(text: string): EmittedSourceEntry[] {
  const instances = (JSON.parse(text) as { instances?: unknown }).instances;
  if (!Array.isArray(instances) || !instances.every(isEntry))
    throw new Error('not an emitted-sources manifest: expected { instances: [{ name, target, sha256 }] }');
  return instances;
}

/** The committed manifest's entries. */
export function readManifest(path: string = EMITTED_SOURCES_MANIFEST): EmittedSourceEntry[] {
  return parseManifest(readFileSync(path, 'utf8'));
}

/** Instance keys (`name (target)`) whose hash changed, that are new, or that are gone; each sorted. */
export interface ManifestDiff {
  readonly changed: readonly string[];
  readonly added: readonly string[];
  readonly removed: readonly string[];
}

const hashesByKey = (entries: readonly EmittedSourceEntry[]): Map<string, string> => new Map(entries.map((e) => [entryKey(e), e.sha256]));

/** What differs from the `committed` manifest in the `current` entries. */
export function diffManifests(committed: readonly EmittedSourceEntry[], current: readonly EmittedSourceEntry[]): ManifestDiff {
  const before = hashesByKey(committed);
  const after = hashesByKey(current);
  const keys = (from: Map<string, string>, keep: (key: string, hash: string) => boolean): string[] =>
    [...from]
      .filter(([k, h]) => keep(k, h))
      .map(([k]) => k)
      .sort();
  return {
    changed: keys(after, (k, h) => before.has(k) && before.get(k) !== h),
    added: keys(after, (k) => !before.has(k)),
    removed: keys(before, (k) => !after.has(k)),
  };
}

/** Whether the diff is empty. */
export function manifestsAgree(diff: ManifestDiff): boolean {
  return diff.changed.length + diff.added.length + diff.removed.length === 0;
}

function section(title: string, keys: readonly string[], limit: number): string[] {
  if (keys.length === 0) return [];
  const more = keys.length > limit ? [`  … and ${keys.length - limit} more`] : [];
  return [`${title} (${keys.length}):`, ...keys.slice(0, limit).map((k) => `  ${k}`), ...more];
}

/** A readable report of a non-empty diff: the first `limit` keys of each kind and what to do. */
export function describeManifestDiff(diff: ManifestDiff, limit = 20): string {
  return [
    'The emitted kernel sources differ from tools/workspace/emitted-sources.sha256.json.',
    ...section('source changed', diff.changed, limit),
    ...section('new instance', diff.added, limit),
    ...section('instance gone', diff.removed, limit),
    `If (and only if) this change of emitted source is intended, run: ${WRITE_MANIFEST_COMMAND}`,
  ].join('\n');
}
