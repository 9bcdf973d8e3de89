// Kernel instances of the GEMM operator: a Policy bound to the sm_90a warp-specialized TMA + wgmma
// pipeline of @tilekit/gemm, with a deterministic key (= entry point), the predicates that decide
// which problems it runs, and the launch constants the host asks for. Host code never re-derives these.
import {
  add,
  cast,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
  KernelSignature,
  mul,
  type SourceBuilder,
  sm90a,
  type InstanceKey,
  type KernelArgValues,
  type PointerParam,
  type ScalarParam,
  type Target,
} from '@tilekit/codegen';
import {
  checkGemmEpilogue,
  GEMM_EPILOGUE_NONE,
  isIdentityEpilogue,
  WsTmaWgmmaPipeline,
  type GemmEpilogue,
  type WsTmaWgmmaPolicy,
} from '@tilekit/gemm';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { getDType } from '@tilekit/numeric';
import { makeTensorView } from '@tilekit/tile';
import {
  GEMM_MAX_BATCH,
  GEMM_MAX_DIM,
  gemmOperandMajors,
  type CheckedGemmProblem,
  type GemmDType,
  type GemmLayoutName,
} from './gemmProblem.ts';

/** The Policy of one GEMM instance: the pipeline's shape plus the epilogue's vector width. */
export interface GemmPolicy extends Omit<WsTmaWgmmaPolicy, 'aMajor' | 'bMajor'> {
  readonly dtype: GemmDType;
  /** The storage of A and B (see `GEMM_LAYOUTS`); it decides the operands' majors in shared memory. */
  readonly layout: GemmLayoutName;
  /** C elements per epilogue store: 2 needs n and ldc even (and C 4-byte aligned); 1 runs any shape. */
  readonly cVector: 1 | 2;
  /**
   * The epilogue functor C = act(alpha·(A·B) + bias[n]) (default none: no alpha or bias parameter;
   * the kernel, its name and hash are then exactly those of an instance without this field).
   */
  readonly epilogue?: GemmEpilogue;
}

/** `bias_relu`, `bias`, `silu`: the epilogue's part of an instance name ('' for the identity). */
export function gemmEpilogueName(e: GemmEpilogue): string {
  return [e.bias ? 'bias' : '', e.activation === 'none' ? '' : e.activation].filter(Boolean).join('_');
}

/** Address alignment (bytes, a power of two) of the actual A, B and C pointers. */
export interface GemmAlignment {
  readonly a: number;
  readonly b: number;
  readonly c: number;
}

/** cudaMalloc / cuMemAlloc return addresses aligned to at least 256 bytes. */
export const GEMM_ALLOCATION_ALIGNMENT: GemmAlignment = Object.freeze({ a: 256, b: 256, c: 256 });

/** The largest power of two (up to 256) dividing a device address. */
export function addressAlignment(ptr: bigint): number {
  let a = 1;
  while (a < 256 && ptr % BigInt(a * 2) === 0n) a *= 2;
  return a;
}

/** SMs of an H200 (and H100 SXM): the persistent instances' grid when the launch does not say. */
export const GEMM_DEFAULT_SM_COUNT = 132;

/** How a launch looks: grid (block tiles, batch), the warpgroups, and the dynamic shared memory. */
export interface GemmLaunch {
  readonly grid: readonly [number, number, number];
  readonly block: readonly [number, number, number];
  readonly sharedBytes: number;
}

function baseParams(policy: GemmPolicy, target: Target) {
  const element = target.dtypeType(policy.dtype);
  const dim = { range: [1, GEMM_MAX_DIM] as const };
  return {
    a_map: kernelParam.tensorMap(),
    b_map: kernelParam.tensorMap(),
    c: kernelParam.pointer(element, { align: policy.cVector * getDType(policy.dtype).bytes }),
    m: kernelParam.i32(dim),
    n: kernelParam.i32(dim),
    k: kernelParam.i32(dim),
    ldc: kernelParam.i32(dim),
    batch_stride_c: kernelParam.i64({ range: [0, 2 ** 50] }),
  };
}

/** The epilogue's parameters, after the others: `alpha` (float) and, with a bias, `bias` (const C element pointer). */
export interface GemmEpilogueParams {
  readonly alpha: ScalarParam<'f32'>;
  readonly bias: PointerParam;
}

type GemmParams = ReturnType<typeof baseParams> & Partial<GemmEpilogueParams>;

/** The epilogue's parameters of either CUDA family: `alpha` unless the functor is the identity, `bias` (const `dtype` pointer) when it adds one. */
export function gemmEpilogueParams(epilogue: GemmEpilogue, dtype: GemmDType, target: Target): Partial<GemmEpilogueParams> {
  return {
    ...(isIdentityEpilogue(epilogue) ? {} : { alpha: kernelParam.f32() }),
    ...(epilogue.bias ? { bias: kernelParam.pointer(target.dtypeType(dtype), { const: true, align: getDType(dtype).bytes }) } : {}),
  };
}

/** The epilogue's argument values (`alpha`, and the bias address) for {@link gemmEpilogueParams}; empty for the identity. */
export function gemmEpilogueArgs(
  epilogue: GemmEpilogue,
  problem: CheckedGemmProblem,
  bias: bigint | undefined,
): { readonly alpha?: number; readonly bias?: bigint } {
  if (isIdentityEpilogue(epilogue)) return {};
  return { alpha: problem.alpha, ...(epilogue.bias ? { bias: bias ?? 0n } : {}) };
}

/**
 * The policy without an identity epilogue (so instances without one keep their key and source) and
 * the checked functor: what both CUDA families' constructors start from.
 */
export function splitGemmEpilogue<P extends { readonly epilogue?: GemmEpilogue }>(
  policy: P,
): { readonly policy: P; readonly plain: Omit<P, 'epilogue'>; readonly epilogue: GemmEpilogue } {
  const epilogue = checkGemmEpilogue(policy.epilogue ?? GEMM_EPILOGUE_NONE);
  const { epilogue: _given, ...plain } = policy;
  return { policy: Object.freeze(isIdentityEpilogue(epilogue) ? (plain as P) : ({ ...plain, epilogue } as P)), plain, epilogue };
}

/** What {@link gemmSharedPredicates} reads of an instance. */
export interface GemmPredicateRules {
  readonly dtype: GemmDType;
  readonly policy: { readonly layout: GemmLayoutName; readonly cVector: 1 | 2 };
  readonly epilogue: GemmEpilogue;
}

/**
 * The predicates both CUDA families share, in two parts so each family's own (operand strides and
 * alignment) go between them: `head` — dtype, layout and epilogue functor (alpha ≠ 1 needs one);
 * `cStore` — the C store width (n, ldc and C's address for 2-element stores; C's element alignment
 * for scalar ones). One line per broken predicate.
 */
export function gemmSharedPredicates(
  instance: GemmPredicateRules,
  problem: CheckedGemmProblem,
  alignment: GemmAlignment,
): { readonly head: string[]; readonly cStore: string[] } {
  const head: string[] = [];
  const cStore: string[] = [];
  const e = getDType(instance.dtype).bytes;
  if (problem.dtype !== instance.dtype) head.push(`dtype ${problem.dtype}: this kernel computes ${instance.dtype}`);
  if (problem.layout !== instance.policy.layout) head.push(`layout ${problem.layout}: this kernel reads ${instance.policy.layout}`);
  if (problem.activation !== instance.epilogue.activation)
    head.push(`activation ${problem.activation}: this kernel applies ${instance.epilogue.activation}`);
  if (problem.bias !== instance.epilogue.bias) head.push(problem.bias ? 'bias: this kernel adds none' : 'no bias: this kernel adds one');
  if (problem.alpha !== 1 && isIdentityEpilogue(instance.epilogue))
    head.push(`alpha ${problem.alpha}: this kernel has no epilogue functor (alpha 1 only)`);
  const v = instance.policy.cVector;
  if (v > 1) {
    if (problem.n % v !== 0) cStore.push(`n = ${problem.n} is not a multiple of the ${v}-element C store`);
    if (problem.ldc % v !== 0) cStore.push(`ldc = ${problem.ldc} is not a multiple of the ${v}-element C store`);
    if (alignment.c % (v * e) !== 0) cStore.push(`c address aligned to ${alignment.c} bytes, needs ${v * e}`);
  } else if (alignment.c % e !== 0) cStore.push(`c address aligned to ${alignment.c} bytes, needs ${e}`);
  return { head, cStore };
}

/** The entry point's parameters (the epilogue's `alpha` and `bias` only where the epilogue is not the identity). */
function gemmParams(policy: GemmPolicy, target: Target): GemmParams {
  return { ...baseParams(policy, target), ...gemmEpilogueParams(policy.epilogue ?? GEMM_EPILOGUE_NONE, policy.dtype, target) };
}

/** The entry point's signature: the parameters of `gemmParams` under `name`. */
export function gemmSignature(name: string, policy: GemmPolicy, target: Target = sm90a): KernelSignature<GemmParams> {
  return new KernelSignature(name, target, gemmParams(policy, target));
}

/** TMA (cp.async.bulk.tensor) needs global strides that are multiples of 16 bytes and 16-byte aligned bases. */
export const TMA_ALIGNMENT_BYTES = 16;

function gemmKey(policy: GemmPolicy, epilogue: GemmEpilogue, target: Target): InstanceKey {
  const { tileM, tileN, tileK, epilogue: _e, persistent, ...rest } = policy;
  const named = isIdentityEpilogue(epilogue) ? {} : { epilogue: gemmEpilogueName(epilogue) };
  // Persistent instances are named `..._persistent`; a policy without the flag keeps its key.
  const schedule = persistent === true ? { schedule: 'persistent' } : {};
  return instanceKey(
    'gemm_sm90_ws',
    { ...rest, tile: [tileM, tileN, tileK], target: target.name, ...schedule, ...named },
    {
      tags: {
        dtype: '',
        layout: '',
        tile: '',
        stages: 's',
        cVector: 'v',
        ...(persistent === true ? { schedule: '' } : {}),
        ...(isIdentityEpilogue(epilogue) ? {} : { epilogue: '' }),
      },
    },
  );
}

/** One compiled-to-be GEMM kernel of the catalog. Dynamic shared memory: the pipeline's (incl. 1024 of alignment slack). */
export class GemmInstance extends KernelInstance<GemmPolicy, GemmParams> {
  readonly pipeline: WsTmaWgmmaPipeline;
  readonly dtype: GemmDType;
  protected readonly sourceHeader = { title: 'gemm', generator: '@tilekit/kernel-gemm' };

  /** The epilogue functor (the identity when the policy has none). */
  readonly epilogue: GemmEpilogue;

  constructor(policy: GemmPolicy, target: Target = sm90a) {
    // The identity epilogue is not part of the policy: existing instances keep their key and source.
    const { policy: kept, plain, epilogue } = splitGemmEpilogue(policy);
    // The layout decides the operands' majors; K-major ones are left out (the tn pipeline policy as before).
    const majors = gemmOperandMajors(policy.layout);
    const pipeline = new WsTmaWgmmaPipeline({
      ...plain,
      ...(majors.a === 'K' ? {} : { aMajor: majors.a }),
      ...(majors.b === 'K' ? {} : { bMajor: majors.b }),
    });
    const key = gemmKey(kept, epilogue, target);
    super({ key, policy: kept, target, params: gemmParams(kept, target), threads: pipeline.threads, sharedBytes: pipeline.sharedBytes });
    this.pipeline = pipeline;
    this.epilogue = epilogue;
    this.dtype = policy.dtype;
  }

  /** Why this instance cannot run `problem` with pointers of `alignment` (one line per broken predicate); empty when it can. */
  unsupported(problem: CheckedGemmProblem, alignment: GemmAlignment = GEMM_ALLOCATION_ALIGNMENT): string[] {
    const shared = gemmSharedPredicates(this, problem, alignment);
    const out = shared.head;
    const e = getDType(this.dtype).bytes;
    if ((problem.lda * e) % TMA_ALIGNMENT_BYTES !== 0)
      out.push(`lda · ${e} = ${problem.lda * e} bytes is not a multiple of ${TMA_ALIGNMENT_BYTES} (TMA global stride)`);
    if ((problem.ldb * e) % TMA_ALIGNMENT_BYTES !== 0)
      out.push(`ldb · ${e} = ${problem.ldb * e} bytes is not a multiple of ${TMA_ALIGNMENT_BYTES} (TMA global stride)`);
    if (alignment.a % TMA_ALIGNMENT_BYTES !== 0) out.push(`a address aligned to ${alignment.a} bytes, TMA needs ${TMA_ALIGNMENT_BYTES}`);
    if (alignment.b % TMA_ALIGNMENT_BYTES !== 0) out.push(`b address aligned to ${alignment.b} bytes, TMA needs ${TMA_ALIGNMENT_BYTES}`);
    const v = this.policy.cVector;
    out.push(...shared.cStore);
    if (this.pipeline.gridSize(problem.m, problem.n) > 2 ** 31 - 1) out.push('more than 2^31 − 1 block tiles');
    if (problem.batch > 1) {
      for (const [name, stride] of [
        ['batchStrideA', problem.batchStrideA],
        ['batchStrideB', problem.batchStrideB],
      ] as const) {
        if ((stride * e) % TMA_ALIGNMENT_BYTES !== 0)
          out.push(`${name} · ${e} = ${stride * e} bytes is not a multiple of ${TMA_ALIGNMENT_BYTES} (TMA global stride)`);
        if (stride * e >= 2 ** 40) out.push(`${name} · ${e} bytes reaches 2^40 (TMA global stride)`);
      }
      if (problem.batchStrideC % v !== 0) out.push(`batchStrideC = ${problem.batchStrideC} is not a multiple of the ${v}-element C store`);
    }
    return out;
  }

  /** Whether the instance uses the persistent tile scheduler (one block per SM looping over tiles). */
  get persistent(): boolean {
    return this.policy.persistent === true;
  }

  /**
   * Dispatch preference among instances that run `problem` (lower is better): the widest C store;
   * then 128×256 tiles when they still give every SM of an H200 (132) a tile, else the smaller tile;
   * then one block per tile before the persistent scheduler (not measured faster yet: those run by
   * name, `-instance=`).
   */
  preference(problem: CheckedGemmProblem): readonly number[] {
    const tiles = this.pipeline.gridSize(problem.m, problem.n);
    const area = this.policy.tileM * this.policy.tileN;
    return [-this.policy.cVector, tiles >= 132 ? -area : area, this.persistent ? 1 : 0];
  }

  /**
   * The launch: grid [block tiles, batch, 1]; persistent instances launch at most `smCount`
   * (default {@link GEMM_DEFAULT_SM_COUNT}) blocks in all (`persistentGridSize`), each looping over tiles.
   */
  launch(problem: CheckedGemmProblem, options: { readonly smCount?: number } = {}): GemmLaunch {
    const x = this.persistent
      ? this.pipeline.persistentGridSize(problem.m, problem.n, options.smCount ?? GEMM_DEFAULT_SM_COUNT, problem.batch)
      : this.pipeline.gridSize(problem.m, problem.n);
    return { grid: [x, problem.batch, 1], block: [this.threads, 1, 1], sharedBytes: this.sharedBytes };
  }

  /** Kernel argument values: the two encoded tensor maps (128 bytes each), C's address and the sizes (and the epilogue's alpha and bias address). */
  args(problem: CheckedGemmProblem, aMap: Uint8Array, bMap: Uint8Array, c: bigint, bias?: bigint): KernelArgValues<GemmParams> {
    const base = {
      a_map: aMap,
      b_map: bMap,
      c,
      m: problem.m,
      n: problem.n,
      k: problem.k,
      ldc: problem.ldc,
      batch_stride_c: problem.batchStrideC,
    };
    return { ...base, ...gemmEpilogueArgs(this.epilogue, problem, bias) };
  }

  /**
   * The TMA boxes the kernel expects (dimension 0 innermost, the batch last). A K-major operand is
   * one box [tileK, tileM or tileN, 1] of a [K, M or N, batch] map; an M/N-major one is
   * tileMN / 64 boxes [64, tileK, 1] of an [M or N, K, batch] map (the 128B swizzle's 128-byte inner
   * extent). 128B swizzle, zero fill out of bounds.
   */
  get tmaBoxes(): { readonly a: readonly [number, number, number]; readonly b: readonly [number, number, number] } {
    const { aLoads, bLoads } = this.pipeline;
    return { a: [...aLoads.box, 1], b: [...bLoads.box, 1] };
  }

  /** Adds the kernel to a translation unit (one GEMM instance per unit: the leaves are emitted once per file). */
  emit(src: SourceBuilder): void {
    const p = this.policy;
    const m = symbol('m', { max: GEMM_MAX_DIM });
    const n = symbol('n', { max: GEMM_MAX_DIM, multipleOf: p.cVector });
    const ldc = symbol('ldc', { max: GEMM_MAX_DIM, multipleOf: p.cVector });
    const cDesc = makeNaiveTensorDescriptor([m, n], [ldc, 1], { vectorLength: p.cVector });
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads, minBlocksPerSm: 1 } }, (b, args) => {
      const batch = b.let('batch', int32, cast(this.target.blockIdx('y'), int32), { range: [0, GEMM_MAX_BATCH - 1] });
      const cBatch = b.let('c_batch', args.c.type, add(args.c, mul(cast(batch, int64), args.batch_stride_c)));
      this.pipeline.emit(b, this.target, {
        batch,
        aMap: args.a_map,
        bMap: args.b_map,
        m: args.m,
        n: args.n,
        k: args.k,
        c: makeTensorView(cBatch, cDesc, { elementBytes: getDType(p.dtype).bytes }),
        symbols: { m: args.m, n: args.n, ldc: args.ldc },
        ...(args.alpha === undefined
          ? {}
          : { epilogue: { functor: this.epilogue, alpha: args.alpha, ...(args.bias === undefined ? {} : { bias: args.bias }) } }),
      });
    });
  }
}
