// The unified backward workspace (CK-tile's FmhaBwdWorkspaceManager): one device buffer holding
// the host-prepared metadata (nsplits, dq_acc offsets) at its head and the fp32 dQ accumulator
// after it. The caller allocates `totalBytes` and never computes a stride.
import { ArgumentError } from '@tilekit/numeric';
import { fmhaBwdPhysicalSeqlens, type CheckedFmhaBwdTraits } from './fmhaBwdTraits.ts';

/** Every region of the workspace starts at a multiple of this many bytes. */
export const FMHA_BWD_WORKSPACE_ALIGNMENT = 16;
/** Bytes of one dq_acc element (fp32, the accumulator type). */
export const FMHA_BWD_DQ_ACC_ELEMENT_BYTES = 4;
/** Bytes of one nsplits entry (int32, CK's index_t). */
export const FMHA_BWD_NSPLITS_ELEMENT_BYTES = 4;
/** Bytes of one dq_acc offset (int64, CK's long_index_t). */
export const FMHA_BWD_OFFSET_ELEMENT_BYTES = 8;
/** Bytes of one `ordered` counter (int32). */
export const FMHA_BWD_COUNTER_ELEMENT_BYTES = 4;

/**
 * How a dq_dk_dv instance produces dQ — the fact of the selected instance that decides the
 * workspace:
 * - `direct`: writes dQ itself (CK's QrQtrDor pipelines): no workspace at all;
 * - `atomic`: every key tile atomically adds its partial into one fp32 slice (non-deterministic);
 * - `splitStore`: key tile i stores its partial into split i, convert_dq sums the splits in order
 *   (deterministic group mode);
 * - `persistent`: a persistent grid over the SMs, each worker atomically adds into its own split
 *   of the head it works on (deterministic batch mode: one worker per split, fixed order);
 * - `ordered`: the `atomic` layout (one split), each key tile adding its partial of a query tile
 *   only after every earlier key tile meeting that query tile has added its own, counted by an int32
 *   per (batch, query head, query tile) after dq_acc (deterministic, either mode).
 */
export const FMHA_BWD_DQ_ACCUMULATIONS = ['direct', 'atomic', 'splitStore', 'persistent', 'ordered'] as const;
export type FmhaBwdDqAccumulation = (typeof FMHA_BWD_DQ_ACCUMULATIONS)[number];

/** The facts of the selected dq_dk_dv instance the workspace depends on (never re-derived by the host). */
export interface FmhaBwdAccumulationFacts {
  readonly dqAccumulation: FmhaBwdDqAccumulation;
  /** Keys per block tile (CK's kN0) of the selected instance. */
  readonly kN0: number;
  /** Query rows per tile of the selected instance: required by `ordered` (its counters are per query tile). */
  readonly kM0?: number;
}

/** A workspace argument broke a rule; `argument` names it. */
export class FmhaBwdWorkspaceError extends ArgumentError {}

/** x rounded up to a multiple of `alignment` (a positive integer). */
export function alignUp(x: number, alignment: number = FMHA_BWD_WORKSPACE_ALIGNMENT): number {
  return Math.ceil(x / alignment) * alignment;
}

/** The persistent deterministic batch-mode schedule (see `fmhaBwdPersistentSplits`). */
export interface FmhaBwdPersistentSchedule {
  /** Key tiles per (batch, head): ⌈seqlenK / kN0⌉. */
  readonly jobsPerHead: number;
  /** batch · nheadQ · jobsPerHead. */
  readonly totalJobs: number;
  /** The SMs the grid spreads over. */
  readonly workers: number;
  /** ⌈totalJobs / workers⌉: worker w takes jobs [w·jpw, (w + 1)·jpw). */
  readonly jobsPerWorker: number;
  /** The splits any head needs (one per worker touching it), the same for every batch. */
  readonly nsplits: number;
}

/**
 * The split count of deterministic batch mode, persistent over the device's SMs (CK's
 * `GetDqAccSplits`): jobs are (batch, head, key tile) in that order, jobs = ⌈sk/kN0⌉ per head,
 * total = batch·nheadQ·jobs, jpw = ⌈total/smCount⌉ consecutive jobs per worker. A head's jobs
 * [i·jobs, (i + 1)·jobs) meet at most
 *   nsplits = jobs / jpw            if jobs % jpw = 0 (heads start on worker boundaries),
 *           = 1                     if jpw % jobs = 0 (whole heads per worker),
 *           = 1 + ⌈(jobs − 1)/jpw⌉  otherwise (a misaligned run of `jobs` items),
 * workers; the worker w of head i writes split w − ⌊i·jobs / jpw⌋. No keys (sk = 0) gives 1 split
 * (convert_dq then reads one zeroed split). Postcondition (property-tested by simulating the
 * assignment): no head meets more than `nsplits` workers.
 */
export function fmhaBwdPersistentSplits(p: {
  readonly batch: number;
  readonly nheadQ: number;
  readonly seqlenK: number;
  readonly kN0: number;
  readonly smCount: number;
}): FmhaBwdPersistentSchedule {
  for (const key of ['batch', 'nheadQ', 'seqlenK', 'kN0', 'smCount'] as const) {
    const v = p[key];
    const min = key === 'seqlenK' || key === 'batch' ? 0 : 1;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min)
      throw new FmhaBwdWorkspaceError(key, `must be an integer ≥ ${min}`, v);
  }
  const jobsPerHead = Math.ceil(p.seqlenK / p.kN0);
  const totalJobs = p.batch * p.nheadQ * jobsPerHead;
  const workers = p.smCount;
  const jobsPerWorker = Math.ceil(totalJobs / workers);
  let nsplits: number;
  if (jobsPerHead === 0) nsplits = 1;
  else if (jobsPerHead % jobsPerWorker === 0) nsplits = jobsPerHead / jobsPerWorker;
  else if (jobsPerWorker % jobsPerHead === 0) nsplits = 1;
  else nsplits = 1 + Math.ceil((jobsPerHead - 1) / jobsPerWorker);
  return Object.freeze({ jobsPerHead, totalJobs, workers, jobsPerWorker, nsplits });
}

/**
 * CK's NeedsZeroDqAcc: must dq_acc be zeroed before the dq_dk_dv kernel runs?
 * - `direct`: no (there is no dq_acc);
 * - `atomic` (non-deterministic), `persistent` (deterministic batch mode) and `ordered`: yes, adds
 *   start from zero (and `ordered`'s counters too);
 * - `splitStore` (deterministic group mode): only with a mask — a masked key tile may be skipped
 *   and leave its split unwritten; without a mask every key tile stores its whole split.
 */
export function fmhaBwdNeedsZeroDqAcc(accumulation: FmhaBwdDqAccumulation, masked: boolean): boolean {
  switch (accumulation) {
    case 'direct':
      return false;
    case 'atomic':
    case 'persistent':
    case 'ordered':
      return true;
    case 'splitStore':
      return masked;
    default:
      throw new FmhaBwdWorkspaceError('dqAccumulation', `must be one of ${FMHA_BWD_DQ_ACCUMULATIONS.join(', ')}`, accumulation);
  }
}

/**
 * The byte layout of one backward call's workspace, fixed at construction (CK's
 * FmhaBwdWorkspaceManager + PrepareWorkspaceHost):
 * ```
 * [0, nsplitsBytes)                 int32 nsplits[N]      N = batch (deterministic group mode) else 1
 * [offsetsOffset, +offsetsBytes)    int64 dqAccOffsets[batch + 1]   group mode only; [0] = 0,
 *                                   [b + 1] = [b] + nheadQ·nsplits_b·sq_b·hdimQ (elements)
 * [hostBytes, +dq_acc bytes)        fp32 dq_acc, batch b at element dqAccOffsets[b] laid out
 *                                   [nheadQ][nsplits_b][sq_b][hdimQ] (sq_b physical, padding included)
 * [counterOffset, totalBytes)       `ordered` only: int32 counters [batch][nheadQ][counterTiles],
 *                                   counterTiles = ⌈max physical sq_b / kM0⌉
 * ```
 * each region sized up to a multiple of 16 bytes; `hostBytes` = the metadata regions (copied to the
 * head of the device buffer), `deviceBytes` = dq_acc. A `direct` instance needs nothing: all 0.
 * Postconditions (property-tested): regions are disjoint, in order and 16-byte aligned; the offsets
 * are the prefix sums of nheadQ·nsplits_b·sq_b·hdimQ; totalBytes = hostBytes + deviceBytes.
 */
export interface FmhaBwdWorkspace {
  readonly traits: CheckedFmhaBwdTraits;
  readonly dqAccumulation: FmhaBwdDqAccumulation;
  /** kN0 of the selected dq_dk_dv instance. */
  readonly kN0: number;
  /** SMs of the device (used by `persistent` only). */
  readonly smCount: number;
  /** The stored nsplits array (length 1 or batch; empty for `direct`). */
  readonly nsplits: readonly number[];
  /** Element offsets of each batch's dq_acc region (batch + 1 entries; all 0 for `direct`); stored only in group mode. */
  readonly dqAccOffsets: readonly number[];
  readonly nsplitsOffset: number;
  readonly nsplitsBytes: number;
  readonly offsetsOffset: number;
  /** 0 in batch mode (no offsets stored). */
  readonly offsetsBytes: number;
  /** Byte offset of dq_acc in the workspace (CK's GetDqAccDataOffset) = hostBytes. */
  readonly dqAccOffset: number;
  readonly dqAccElements: number;
  /** Metadata bytes (nsplits + offsets), prepared on the host. */
  readonly hostBytes: number;
  /** dq_acc bytes, and `ordered`'s counters after them (zeroed with dq_acc). */
  readonly deviceBytes: number;
  /** `ordered`: byte offset of the counters in the workspace and query tiles per (batch, head); else totalBytes and 0. */
  readonly counterOffset: number;
  readonly counterTiles: number;
  /** hostBytes + deviceBytes: what the caller allocates. */
  readonly totalBytes: number;
  /** Whether prepareWorkspace (and a repeated run) must zero dq_acc. */
  readonly needsZeroDqAcc: boolean;
  /** The persistent schedule (deterministic batch mode only). */
  readonly persistent: FmhaBwdPersistentSchedule | null;
  /** Splits of batch b (0 for `direct`). */
  splitsOfBatch(b: number): number;
  /** A fresh copy of the metadata bytes (little-endian), `hostBytes` long, padding zero. */
  hostImage(): Uint8Array;
}

/**
 * Builds the workspace of `traits` for the selected instance's facts and the device's SM count.
 * nsplits rules: `atomic` 1; `splitStore` per batch ⌈sk_b/kN0⌉ (physical sk_b; 0 for a batch
 * without keys: convert_dq then sums nothing and writes dQ = 0); `persistent` one count for every
 * batch from `fmhaBwdPersistentSplits`; `ordered` 1 (plus its counters).
 * @throws FmhaBwdWorkspaceError when the accumulation does not fit the mode (`splitStore` needs
 * deterministic group mode, `persistent` deterministic batch mode, `ordered` deterministic, `atomic`
 * non-deterministic), for a bad kN0/kM0/smCount, or when the workspace exceeds 2^53 bytes.
 */
export function makeFmhaBwdWorkspace(traits: CheckedFmhaBwdTraits, facts: FmhaBwdAccumulationFacts, smCount: number): FmhaBwdWorkspace {
  const acc = facts.dqAccumulation;
  if (!(FMHA_BWD_DQ_ACCUMULATIONS as readonly unknown[]).includes(acc))
    throw new FmhaBwdWorkspaceError('dqAccumulation', `must be one of ${FMHA_BWD_DQ_ACCUMULATIONS.join(', ')}`, acc);
  if (!Number.isSafeInteger(facts.kN0) || facts.kN0 < 1)
    throw new FmhaBwdWorkspaceError('kN0', 'must be a positive integer (the selected instance’s key tile)', facts.kN0);
  if (!Number.isSafeInteger(smCount) || smCount < 1)
    throw new FmhaBwdWorkspaceError('smCount', 'must be a positive integer (the device’s SMs)', smCount);
  const { groupMode: group, deterministic, batch, nheadQ, hdimQ } = traits;
  const expected: readonly FmhaBwdDqAccumulation[] = !deterministic ? ['atomic'] : [group ? 'splitStore' : 'persistent', 'ordered'];
  if (acc !== 'direct' && !expected.includes(acc)) {
    throw new FmhaBwdWorkspaceError(
      'dqAccumulation',
      `must be direct or ${expected.join(' or ')} for ${deterministic ? 'deterministic' : 'non-deterministic'} ${group ? 'group' : 'batch'} mode`,
      acc,
    );
  }
  if (acc === 'ordered' && (!Number.isSafeInteger(facts.kM0) || facts.kM0! < 1))
    throw new FmhaBwdWorkspaceError('kM0', 'must be a positive integer for ordered (the selected instance’s query tile)', facts.kM0);
  const seq = fmhaBwdPhysicalSeqlens(traits);
  let persistent: FmhaBwdPersistentSchedule | null = null;
  let perBatch: number[];
  let stored: number[];
  if (acc === 'direct') {
    perBatch = Array<number>(batch).fill(0);
    stored = [];
  } else if (acc === 'splitStore') {
    perBatch = seq.k.map((sk) => Math.ceil(sk / facts.kN0));
    stored = perBatch;
  } else if (acc === 'persistent') {
    persistent = fmhaBwdPersistentSplits({ batch, nheadQ, seqlenK: traits.seqlenK, kN0: facts.kN0, smCount });
    perBatch = Array<number>(batch).fill(persistent.nsplits);
    stored = [persistent.nsplits];
  } else {
    perBatch = Array<number>(batch).fill(1);
    stored = [1];
  }
  const offsets = [0];
  for (let b = 0; b < batch; b++) offsets.push(offsets[b]! + nheadQ * perBatch[b]! * seq.q[b]! * hdimQ);
  const dqAccElements = offsets[batch]!;
  const nsplitsBytes = alignUp(FMHA_BWD_NSPLITS_ELEMENT_BYTES * stored.length);
  const offsetsBytes = acc !== 'direct' && group ? alignUp(FMHA_BWD_OFFSET_ELEMENT_BYTES * (batch + 1)) : 0;
  const hostBytes = nsplitsBytes + offsetsBytes;
  const dqAccBytes = dqAccElements * FMHA_BWD_DQ_ACC_ELEMENT_BYTES;
  const counterTiles = acc === 'ordered' ? Math.ceil(Math.max(0, ...seq.q) / facts.kM0!) : 0;
  const counterOffset = hostBytes + alignUp(dqAccBytes);
  const counterBytes = alignUp(batch * nheadQ * counterTiles * FMHA_BWD_COUNTER_ELEMENT_BYTES);
  const deviceBytes = acc === 'ordered' ? counterOffset + counterBytes - hostBytes : dqAccBytes;
  const totalBytes = hostBytes + deviceBytes;
  if (!Number.isSafeInteger(totalBytes)) throw new FmhaBwdWorkspaceError('traits', 'give a workspace beyond 2^53 bytes', totalBytes);
  const needsZeroDqAcc = acc !== 'direct' && deviceBytes > 0 && fmhaBwdNeedsZeroDqAcc(acc, traits.mask.kind !== 'none');
  const frozenStored = Object.freeze(stored.slice());
  const frozenOffsets = Object.freeze(offsets);
  return Object.freeze({
    traits,
    dqAccumulation: acc,
    kN0: facts.kN0,
    smCount,
    nsplits: frozenStored,
    dqAccOffsets: frozenOffsets,
    nsplitsOffset: 0,
    nsplitsBytes,
    offsetsOffset: nsplitsBytes,
    offsetsBytes,
    dqAccOffset: hostBytes,
    dqAccElements,
    hostBytes,
    deviceBytes,
    counterOffset: acc === 'ordered' ? counterOffset : totalBytes,
    counterTiles,
    totalBytes,
    needsZeroDqAcc,
    persistent,
    splitsOfBatch(b: number): number {
      if (!Number.isSafeInteger(b) || b < 0 || b >= batch)
        throw new FmhaBwdWorkspaceError('b', `must be a batch index in [0, ${batch})`, b);
      return perBatch[b]!;
    },
    hostImage(): Uint8Array {
      const bytes = new Uint8Array(hostBytes);
      const view = new DataView(bytes.buffer);
      frozenStored.forEach((n, i) => view.setInt32(i * FMHA_BWD_NSPLITS_ELEMENT_BYTES, n, true));
      if (offsetsBytes > 0)
        frozenOffsets.forEach((o, i) => view.setBigInt64(nsplitsBytes + i * FMHA_BWD_OFFSET_ELEMENT_BYTES, BigInt(o), true));
      return bytes;
    },
  });
}

/**
 * Element index in the workspace's dq_acc of (batch b, head h, split s, physical row r, dim 0):
 * dqAccOffsets[b] + ((h·nsplits_b + s)·sq_b + r)·hdimQ — what the kernels compute from the
 * metadata, for host-side checks of a downloaded workspace.
 */
export function fmhaBwdDqAccIndex(ws: FmhaBwdWorkspace, b: number, h: number, s: number, r: number): number {
  const splits = ws.splitsOfBatch(b);
  const sq = fmhaBwdPhysicalSeqlens(ws.traits).q[b]!;
  for (const [name, v, n] of [
    ['h', h, ws.traits.nheadQ],
    ['s', s, splits],
    ['r', r, sq],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 0 || v >= n) throw new FmhaBwdWorkspaceError(name, `must be in [0, ${n})`, v);
  }
  return ws.dqAccOffsets[b]! + ((h * splits + s) * sq + r) * ws.traits.hdimQ;
}

function list(values: readonly number[], limit: number): string {
  return values.length <= limit ? values.join(', ') : `${values.slice(0, limit).join(', ')}, … (${values.length} in all)`;
}

const range = (start: number, bytes: number): string => `[${start}, ${start + bytes})`;

/**
 * A human-readable byte map of the workspace (for the example and the README): one line per
 * region with its byte range, type, length and contents (long lists cut after `limit` entries),
 * and the per-batch dq_acc shapes.
 */
export function describeFmhaBwdWorkspace(ws: FmhaBwdWorkspace, limit = 4): string {
  const t = ws.traits;
  const mode = `${t.deterministic ? 'deterministic' : 'non-deterministic'} ${t.groupMode ? 'group' : 'batch'} mode`;
  const how: Record<FmhaBwdDqAccumulation, string> = {
    direct: 'dQ written directly',
    atomic: 'atomic adds into one split',
    splitStore: `per-split stores, kN0 = ${ws.kN0}`,
    persistent: `persistent over ${ws.smCount} SMs, kN0 = ${ws.kN0}, ${ws.persistent?.jobsPerWorker ?? 0} jobs per worker`,
    ordered: `adds into one split in key order, kN0 = ${ws.kN0}, ${ws.counterTiles} counted query tiles per head`,
  };
  const lines = [
    `FMHA bwd workspace: ${ws.totalBytes} bytes (host ${ws.hostBytes} + device ` +
      `${ws.deviceBytes}), ${mode}, ${how[ws.dqAccumulation]}, zero dq_acc: ` +
      `${ws.needsZeroDqAcc ? 'yes' : 'no'}`,
  ];
  if (ws.dqAccumulation === 'direct') return `${lines[0]}\n  (no workspace: the dq_dk_dv instance writes dQ itself)`;
  const pad = (used: number, bytes: number): string => (bytes > used ? `, ${bytes - used} padding bytes` : '');
  const nsUsed = ws.nsplits.length * FMHA_BWD_NSPLITS_ELEMENT_BYTES;
  lines.push(
    `  ${range(ws.nsplitsOffset, ws.nsplitsBytes)}  int32 nsplits[${ws.nsplits.length}] = [${list(ws.nsplits, limit)}]${pad(nsUsed, ws.nsplitsBytes)}`,
  );
  if (ws.offsetsBytes > 0) {
    const used = (t.batch + 1) * FMHA_BWD_OFFSET_ELEMENT_BYTES;
    lines.push(
      `  ${range(ws.offsetsOffset, ws.offsetsBytes)}  int64 dq_acc_offsets[${t.batch + 1}] = [` +
        `${list(ws.dqAccOffsets, limit + 1)}]${pad(used, ws.offsetsBytes)}`,
    );
  }
  lines.push(`  ${range(ws.dqAccOffset, ws.dqAccElements * FMHA_BWD_DQ_ACC_ELEMENT_BYTES)}  fp32 dq_acc[${ws.dqAccElements}]`);
  const sq = fmhaBwdPhysicalSeqlens(t).q;
  const shown = Math.min(t.batch, limit);
  for (let b = 0; b < shown; b++) {
    const elems = ws.dqAccOffsets[b + 1]! - ws.dqAccOffsets[b]!;
    lines.push(
      `    batch ${b}: ` +
        `${range(ws.dqAccOffset + ws.dqAccOffsets[b]! * FMHA_BWD_DQ_ACC_ELEMENT_BYTES, elems * FMHA_BWD_DQ_ACC_ELEMENT_BYTES)}` +
        ` [${t.nheadQ} heads][${ws.splitsOfBatch(b)} splits][${sq[b]} rows][${t.hdimQ}]`,
    );
  }
  if (t.batch > shown) lines.push(`    … ${t.batch - shown} more batches`);
  if (ws.dqAccumulation === 'ordered') {
    const n = t.batch * t.nheadQ * ws.counterTiles;
    lines.push(
      `  ${range(ws.counterOffset, ws.totalBytes - ws.counterOffset)}  int32 counters[${n}] [${t.batch}][${t.nheadQ}][${ws.counterTiles}]`,
    );
  }
  return lines.join('\n');
}
