// Kernel instances of the permute operator: a Policy bound to a kernel, with a deterministic key,
// the predicates that decide which problems it can run, and the launch constants the host asks for
// (grid, block, shared memory, argument values). Host code never re-derives these.
import {
  instanceKey,
  KernelInstance,
  sm90a,
  type AnyKernelSignature,
  type InstanceKey,
  type KernelArgValues,
  type SourceBuilder,
  type Target,
} from '@tilekit/codegen';
import { getDType } from '@tilekit/numeric';
import { emitHeadPermuteKernel, HEAD_PERMUTE_DOMAINS, headPermuteParams, type HeadPermutePolicy } from './headPermuteKernel.ts';
import { elementBytes, type PermuteDType, type PermuteKind, type PermuteProblem } from './permuteProblem.ts';
import {
  checkTransposePolicy,
  emitTransposeKernel,
  transposeDomain,
  transposeSharedBytes,
  transposeParams,
  type TransposePolicy,
} from './transposeKernel.ts';
import type { VectorBytes } from './vectorAccess.ts';

/** How a launch looks: explicit grid and block, and dynamic shared memory (always 0 here). */
export interface PermuteLaunch {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedBytes: number;
}

/** Address alignment (bytes, a power of two) of the actual source and destination pointers. */
export interface PermuteAlignment {
  readonly src: number;
  readonly dst: number;
}

/** cudaMalloc / cuMemAlloc return addresses aligned to at least 256 bytes. */
export const ALLOCATION_ALIGNMENT: PermuteAlignment = Object.freeze({ src: 256, dst: 256 });

/** The largest power of two (up to 256) dividing a device address. */
export function addressAlignment(ptr: bigint): number {
  let a = 1;
  while (a < 256 && ptr % BigInt(a * 2) === 0n) a *= 2;
  return a;
}

type HeadParams = ReturnType<typeof headPermuteParams>;
type TransposeParams = ReturnType<typeof transposeParams>;

/** One compiled-to-be kernel of the catalog. */
export interface PermuteInstance {
  readonly key: InstanceKey;
  /** The instance name, which is also the kernel's `extern "C"` entry point. */
  readonly name: string;
  readonly family: 'head' | 'transpose';
  readonly kinds: readonly PermuteKind[];
  readonly dtype: PermuteDType;
  readonly vectorBytes: VectorBytes;
  readonly threads: number;
  /** Static shared memory the kernel declares, bytes. */
  readonly staticSharedBytes: number;
  /** The kernel's parameters: the entry point is emitted from it and arguments are packed by it. */
  readonly signature: AnyKernelSignature;
  /**
   * Why this instance cannot run `problem` with pointers of `alignment` (one line per broken
   * predicate, naming the value and the rule); empty when it can.
   */
  unsupported(problem: PermuteProblem, alignment?: PermuteAlignment): string[];
  /** Dispatch preference among instances that can run `problem`: lower is better. */
  preference(problem: PermuteProblem): readonly number[];
  /** Grid, block and shared memory for `problem` (which it must support). */
  launch(problem: PermuteProblem): PermuteLaunch;
  /** The kernel argument values for `problem` and the two device addresses. */
  args(problem: PermuteProblem, src: bigint, dst: bigint): Record<string, unknown>;
  /** Adds the kernel to a translation unit (several instances may share one). */
  emit(src: SourceBuilder): void;
  /** The kernel alone as a translation unit. */
  source(): string;
}

function alignmentReasons(vectorBytes: number, alignment: PermuteAlignment): string[] {
  const out: string[] = [];
  if (alignment.src % vectorBytes !== 0) out.push(`src address aligned to ${alignment.src} bytes, needs ${vectorBytes}`);
  if (alignment.dst % vectorBytes !== 0) out.push(`dst address aligned to ${alignment.dst} bytes, needs ${vectorBytes}`);
  return out;
}

/** The header of every permute instance's source. */
const PERMUTE_SOURCE_HEADER = Object.freeze({ title: 'permute', generator: '@tilekit/kernel-permute' });

/** The head-permute kernel (bhsd ↔ bshd) with one policy. */
export class HeadPermuteInstance extends KernelInstance<HeadPermutePolicy, HeadParams> implements PermuteInstance {
  readonly family = 'head' as const;
  readonly kinds = ['bhsd2bshd', 'bshd2bhsd'] as const;
  readonly dtype: PermuteDType;
  readonly vectorBytes: VectorBytes;
  /** Elements per vector. */
  readonly vectorElements: number;
  /** Vectors of the (x, d / V) plane one block moves per row. */
  readonly tile: number;
  /** Rows (consecutive y) one block moves. */
  readonly rows: number;
  protected readonly sourceHeader = PERMUTE_SOURCE_HEADER;

  constructor(policy: HeadPermutePolicy, target: Target = sm90a) {
    const frozen = Object.freeze({ ...policy });
    const key = instanceKey(
      'permute_head',
      { ...frozen, target: target.name },
      { tags: { dtype: '', vectorBytes: 'v', threads: 't', unroll: 'u', rows: 'r' } },
    );
    super({ key, policy: frozen, target, params: headPermuteParams(frozen, target), threads: policy.threads });
    this.dtype = policy.dtype;
    this.vectorBytes = policy.vectorBytes;
    this.vectorElements = policy.vectorBytes / getDType(policy.dtype).bytes;
    this.tile = policy.threads * policy.unroll;
    this.rows = policy.rows;
  }

  /** The kernel's (x, y) for a problem: x is the dim read first, y the one written first. */
  static axes(problem: PermuteProblem & { kind: 'bhsd2bshd' | 'bshd2bhsd' }): { x: number; y: number } {
    return problem.kind === 'bhsd2bshd' ? { x: problem.h, y: problem.s } : { x: problem.s, y: problem.h };
  }

  unsupported(problem: PermuteProblem, alignment: PermuteAlignment = ALLOCATION_ALIGNMENT): string[] {
    if (problem.kind === 'transpose') return [`kind ${problem.kind}: this kernel does ${this.kinds.join(' and ')}`];
    const out: string[] = [];
    if (problem.dtype !== this.dtype) out.push(`dtype ${problem.dtype}: this kernel moves ${this.dtype}`);
    const rowBytes = problem.d * elementBytes(problem);
    if (rowBytes % this.vectorBytes !== 0)
      out.push(`d · ${elementBytes(problem)} = ${rowBytes} bytes is not a multiple of the ${this.vectorBytes}-byte vector`);
    const { x, y } = HeadPermuteInstance.axes(problem);
    const D = HEAD_PERMUTE_DOMAINS;
    if (problem.b > D.batch) out.push(`b = ${problem.b} exceeds ${D.batch}`);
    if (x > D.x) out.push(`${problem.kind === 'bhsd2bshd' ? 'h' : 's'} = ${x} exceeds ${D.x}`);
    if (y > D.y) out.push(`${problem.kind === 'bhsd2bshd' ? 's' : 'h'} = ${y} exceeds ${D.y}`);
    if (problem.d > D.d) out.push(`d = ${problem.d} exceeds ${D.d}`);
    const tiles = Math.ceil((x * Math.ceil(problem.d / this.vectorElements)) / this.tile);
    if (tiles > D.tiles) out.push(`${tiles} tiles of ${this.tile} vectors exceed grid.y ${D.tiles}`);
    out.push(...alignmentReasons(this.vectorBytes, alignment));
    return out;
  }

  preference(problem: PermuteProblem): readonly number[] {
    if (problem.kind === 'transpose') return [Infinity];
    const { x } = HeadPermuteInstance.axes(problem);
    const plane = x * (problem.d / this.vectorElements);
    // Widest vectors first; then the largest tile that the (x, d / V) plane fills, else the smallest.
    return [-this.vectorBytes, this.tile <= plane ? -this.tile : this.tile, -this.rows];
  }

  launch(problem: PermuteProblem): PermuteLaunch {
    if (problem.kind === 'transpose') throw new Error(`${this.name} cannot launch ${problem.kind}`);
    const { x, y } = HeadPermuteInstance.axes(problem);
    const plane = x * (problem.d / this.vectorElements);
    return { grid: [Math.ceil(y / this.rows), Math.ceil(plane / this.tile), problem.b], block: [this.threads, 1, 1], sharedBytes: 0 };
  }

  args(problem: PermuteProblem, src: bigint, dst: bigint): KernelArgValues<HeadParams> {
    if (problem.kind === 'transpose') throw new Error(`${this.name} cannot run ${problem.kind}`);
    const { x, y } = HeadPermuteInstance.axes(problem);
    return { src, dst, xdim: x, ydim: y, dvec: problem.d / this.vectorElements };
  }

  emit(src: SourceBuilder): void {
    emitHeadPermuteKernel(src, this.name, this.policy, this.target, this.signature);
  }
}

/** Transpose tile heights in order of preference (unlisted heights come last). */
export const TRANSPOSE_TILE_PREFERENCE: readonly number[] = [128, 64, 256];

/** The 2-D transpose kernel with one policy. */
export class TransposeInstance extends KernelInstance<TransposePolicy, TransposeParams> implements PermuteInstance {
  readonly family = 'transpose' as const;
  readonly kinds = ['transpose'] as const;
  readonly dtype: PermuteDType;
  readonly vectorBytes: VectorBytes;
  readonly vectorElements: number;
  protected readonly sourceHeader = PERMUTE_SOURCE_HEADER;

  constructor(policy: TransposePolicy, target: Target = sm90a) {
    checkTransposePolicy(policy);
    const frozen = Object.freeze({ ...policy });
    const { tileM, tileN, ...rest } = frozen;
    const key = instanceKey(
      'permute_transpose',
      { ...rest, tile: [tileM, tileN], target: target.name },
      { tags: { dtype: '', vectorBytes: 'v', tile: '', threads: 't', storeRun: 'r', indexDomain: '' } },
    );
    const staticSharedBytes = transposeSharedBytes(policy);
    super({ key, policy: frozen, target, params: transposeParams(frozen, target), threads: policy.threads, staticSharedBytes });
    this.dtype = policy.dtype;
    this.vectorBytes = policy.vectorBytes;
    this.vectorElements = policy.vectorBytes / getDType(policy.dtype).bytes;
  }

  unsupported(problem: PermuteProblem, alignment: PermuteAlignment = ALLOCATION_ALIGNMENT): string[] {
    if (problem.kind !== 'transpose') return [`kind ${problem.kind}: this kernel does transpose`];
    const out: string[] = [];
    if (problem.dtype !== this.dtype) out.push(`dtype ${problem.dtype}: this kernel moves ${this.dtype}`);
    const V = this.vectorElements;
    if (problem.m % V !== 0) out.push(`m = ${problem.m} is not a multiple of the ${V}-element vector`);
    if (problem.n % V !== 0) out.push(`n = ${problem.n} is not a multiple of the ${V}-element vector`);
    const domain = transposeDomain(this.policy);
    if (problem.m > domain.m) out.push(`m = ${problem.m} exceeds ${domain.m} (${this.policy.indexDomain} index domain)`);
    if (problem.n > domain.n) out.push(`n = ${problem.n} exceeds ${domain.n} (${this.policy.indexDomain} index domain)`);
    out.push(...alignmentReasons(this.vectorBytes, alignment));
    return out;
  }

  preference(problem: PermuteProblem): readonly number[] {
    if (problem.kind !== 'transpose') return [Infinity];
    // Widest vectors, 32-bit offsets when they suffice, then the preferred tile height (tall tiles
    // write longer runs of each output row; measured on the H200, see README).
    return [-this.vectorBytes, this.policy.indexDomain === 'i32' ? 0 : 1, TRANSPOSE_TILE_PREFERENCE.indexOf(this.policy.tileM) >>> 0];
  }

  launch(problem: PermuteProblem): PermuteLaunch {
    if (problem.kind !== 'transpose') throw new Error(`${this.name} cannot launch ${problem.kind}`);
    return {
      grid: [Math.ceil(problem.n / this.policy.tileN), Math.ceil(problem.m / this.policy.tileM), 1],
      block: [this.threads, 1, 1],
      sharedBytes: 0,
    };
  }

  args(problem: PermuteProblem, src: bigint, dst: bigint): KernelArgValues<TransposeParams> {
    if (problem.kind !== 'transpose') throw new Error(`${this.name} cannot run ${problem.kind}`);
    return { src, dst, mrows: problem.m, ncols: problem.n };
  }

  emit(src: SourceBuilder): void {
    emitTransposeKernel(src, this.name, this.policy, this.target, this.signature);
  }
}
