// Provenance of a record written on the GPU machine (gpu-tests.json, sanitize.json): the commit the
// code came from, the card and its state (nvidia-smi), the date. The commit is the pack's
// (`.device/manifest.json`, written by pack.mjs from git) when the bundles came from a pack, else
// this checkout's git state; `<sha>+uncommitted` when the tree had changes, `unknown` without either
// (the format of tools/bench's packedCommit). nvidia-smi is optional: without it, or for a field it
// reports as [N/A], the value is null and the record says why.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The nvidia-smi fields queried, in order (`--query-gpu=…`), and the record's name for each. */
export const NVIDIA_SMI_FIELDS = [
  ['name', 'device'],
  ['driver_version', 'driver'],
  ['clocks.sm', 'smClockMHz'],
  ['clocks.max.sm', 'smClockMaxMHz'],
  ['power.limit', 'powerLimitW'],
];

/** `sha` or `sha+uncommitted`. */
function commitLabel(commit, dirty) {
  return `${commit}${dirty ? '+uncommitted' : ''}`;
}

/** `{ commit, dirty }` of the git work tree at `root`; undefined where git or the repository is missing. */
export function gitState(root) {
  const git = (args) =>
    execFileSync('git', args, { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  try {
    return { commit: git(['rev-parse', 'HEAD']), dirty: git(['status', '--porcelain']) !== '' };
  } catch {
    return undefined;
  }
}

/** The commit of a pack's manifest.json (`{ commit, dirty }`); undefined when the file is missing, unreadable or has no commit. */
export function manifestCommit(manifestPath) {
  try {
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    return typeof manifest.commit === 'string' && manifest.commit !== ''
      ? commitLabel(manifest.commit, manifest.dirty === true)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The commit a record names: the pack's manifest when `manifestPath` is given (bundles from a pack),
 * else git at `root` (bundles made from this checkout), else `unknown`.
 */
export function recordCommit({ manifestPath, root }) {
  if (manifestPath !== undefined) return manifestCommit(manifestPath) ?? 'unknown';
  const state = root === undefined ? undefined : gitState(root);
  return state === undefined ? 'unknown' : commitLabel(state.commit, state.dirty);
}

/** A numeric nvidia-smi value (`1980`, `700.00`), null for `[N/A]`, `[Not Supported]` or anything else. */
function numberOrNull(text) {
  const value = Number(text);
  return text !== '' && Number.isFinite(value) ? value : null;
}

/** One line of `nvidia-smi --query-gpu=<NVIDIA_SMI_FIELDS> --format=csv,noheader,nounits`, as record fields. */
export function parseNvidiaSmiLine(line) {
  const cells = line.split(',').map((c) => c.trim());
  if (cells.length !== NVIDIA_SMI_FIELDS.length)
    throw new RangeError(`nvidia-smi line: expected ${NVIDIA_SMI_FIELDS.length} fields, got ${cells.length}: '${line}'`);
  const text = (i) => (cells[i] === '' || cells[i].startsWith('[') ? null : cells[i]);
  return {
    device: text(0),
    driver: text(1),
    smClockMHz: numberOrNull(cells[2]),
    smClockMaxMHz: numberOrNull(cells[3]),
    powerLimitW: numberOrNull(cells[4]),
  };
}

/** Runs nvidia-smi (30 s at most) and returns its stdout; throws when it cannot run. */
function runNvidiaSmi(args) {
  return execFileSync('nvidia-smi', args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 }).toString();
}

/**
 * The first GPU's name and state from nvidia-smi (`run` stands in for it in tests). Never throws:
 * without nvidia-smi every field is null and `error` says why.
 */
export function queryNvidiaSmi(run = runNvidiaSmi) {
  const args = [`--query-gpu=${NVIDIA_SMI_FIELDS.map(([f]) => f).join(',')}`, '--format=csv,noheader,nounits'];
  try {
    const line = run(args)
      .split('\n')
      .find((l) => l.trim() !== '');
    if (line === undefined) throw new Error('nvidia-smi printed no GPU');
    return parseNvidiaSmiLine(line);
  } catch (error) {
    const nulls = Object.fromEntries(NVIDIA_SMI_FIELDS.map(([, key]) => [key, null]));
    return { ...nulls, error: `nvidia-smi: ${String(error?.message ?? error).split('\n')[0]}` };
  }
}

/**
 * The provenance fields of a record: `commit` (see recordCommit), `device` (nvidia-smi's name, else
 * `fallbackDevice`, else `unknown`), `date` (ISO 8601), and `provenance` with the driver, the current
 * and maximum SM clock (MHz) and the power limit (W) — null where nvidia-smi did not say, with its error.
 */
export function recordProvenance({ manifestPath, root, fallbackDevice, now = new Date(), smi = queryNvidiaSmi } = {}) {
  const { device, error, ...state } = smi();
  return {
    commit: recordCommit({ manifestPath, root }),
    device: device ?? fallbackDevice ?? 'unknown',
    date: now.toISOString(),
    provenance: { ...state, ...(error === undefined ? {} : { error }) },
  };
}
