import type { Target, TargetName } from '@tilekit/codegen';
import type { DTypeName } from '@tilekit/numeric';
import { WarpGemmSelectionError, type WarpGemmRejection } from '../errors.ts';
import { mfma32x32x8Atom } from './mfma32x32x8Atom.ts';
import { mmaSyncM16n8k16Atom } from './mmaSyncM16n8k16Atom.ts';
import type { OperandSource, WarpGemmAtom } from './warpGemmAtom.ts';
import { wgmmaAtom } from './wgmmaAtom.ts';

/** What the block layer asks the warp layer for (CK-tile's `WarpGemmMfmaDispatcher` key). */
export interface WarpGemmQuery {
  readonly aType: DTypeName;
  readonly bType: DTypeName;
  readonly accType: DTypeName;
  /** A target or its name. */
  readonly target: Target | TargetName;
  /** The instruction shape: M×N×K of one issue by one warp / warpgroup / wavefront. */
  readonly m: number;
  readonly n: number;
  readonly k: number;
  /** Where A comes from (default: registers for mma.sync/MFMA, shared memory for wgmma). */
  readonly aSource?: OperandSource;
}

/** One family of atoms in the dispatch table: explicit predicates, each with its reason. */
interface Family {
  readonly name: string;
  readonly targets: readonly TargetName[];
  readonly dtype: DTypeName;
  readonly shape: string;
  readonly shapeMatches: (m: number, n: number, k: number) => boolean;
  /** Where the family can read A from. */
  readonly aSources: readonly OperandSource[];
  readonly make: (q: WarpGemmQuery) => WarpGemmAtom;
}

const families: readonly Family[] = (['fp16', 'bf16'] as const).flatMap((dtype): Family[] => [
  {
    name: `wgmma.m64nNk16 ${dtype}`,
    targets: ['sm_90a'],
    dtype,
    shape: '64×N×16 with N a multiple of 8 in [8, 256]',
    shapeMatches: (m, n, k) => m === 64 && k === 16 && Number.isInteger(n) && n >= 8 && n <= 256 && n % 8 === 0,
    aSources: ['shared', 'registers'],
    make: (q) => wgmmaAtom({ n: q.n, dtype, aSource: q.aSource ?? 'shared' }),
  },
  {
    name: `mma.sync.m16n8k16 ${dtype}`,
    targets: ['sm_80', 'sm_90a'],
    dtype,
    shape: '16×8×16',
    shapeMatches: (m, n, k) => m === 16 && n === 8 && k === 16,
    aSources: ['registers'],
    make: () => mmaSyncM16n8k16Atom(dtype),
  },
  {
    name: `mfma.32x32x8 ${dtype}`,
    targets: ['gfx942'],
    dtype,
    shape: '32×32×8',
    shapeMatches: (m, n, k) => m === 32 && n === 32 && k === 8,
    aSources: ['registers'],
    make: () => mfma32x32x8Atom(dtype),
  },
]);

/**
 * The warp GEMM atom for (dtypes, M×N×K, target), chosen by explicit predicates over a fixed
 * table (mma.sync m16n8k16 on sm_80/sm_90a, wgmma m64nNk16 with B from shared memory and A from
 * shared memory (default) or registers on sm_90a,
 * MFMA 32×32×8 on gfx942; fp16/bf16 inputs of one type, fp32 accumulation). At most one family
 * matches a query. When none does, throws `WarpGemmSelectionError` whose `rejections` give, for
 * every family, the first predicate that failed (target, dtypes, accumulator, shape, A source).
 */
export function selectWarpGemmAtom(query: WarpGemmQuery): WarpGemmAtom {
  const target = typeof query.target === 'string' ? query.target : query.target.name;
  const rejections: WarpGemmRejection[] = [];
  for (const f of families) {
    let reason: string | null = null;
    if (!f.targets.includes(target)) reason = `needs target ${f.targets.join(' or ')}, not ${target}`;
    else if (query.aType !== f.dtype || query.bType !== f.dtype)
      reason = `needs A and B of ${f.dtype}, not ${query.aType} and ${query.bType}`;
    else if (query.accType !== 'fp32') reason = `accumulates in fp32, not ${query.accType}`;
    else if (!f.shapeMatches(query.m, query.n, query.k)) reason = `shape must be ${f.shape}, not ${query.m}×${query.n}×${query.k}`;
    else if (query.aSource !== undefined && !f.aSources.includes(query.aSource))
      reason = `reads A from ${f.aSources.join(' or ')}, not ${query.aSource}`;
    if (reason === null) return f.make(query);
    rejections.push({ atom: f.name, reason });
  }
  const source = query.aSource === undefined ? '' : `, A from ${query.aSource}`;
  throw new WarpGemmSelectionError(
    `{ a: ${query.aType}, b: ${query.bType}, acc: ${query.accType}, target: ${target}, ${query.m}×${query.n}×${query.k}${source} }`,
    rejections,
  );
}
