// sm_80 GEMM kernel instances: a Policy bound to the multi-stage cp.async + ldmatrix + mma.sync
// pipeline of @tilekit/gemm, with a deterministic key (= entry point), the predicates that decide
// which problems it runs (each with its reason), and the launch constants. Compiled for sm_80 (A100)
// or, with the sm_90a target, for Hopper (an sm_80 cubin does not load on sm_90).
import {
  add,
  bitAnd,
  cast,
  instanceKey,
  int32,
  int64,
  KernelInstance,
  mul,
  type SourceBuilder,
  sm80,
  type InstanceKey,
  type KernelArgValues,
  type Target,
} from '@tilekit/codegen';
import { CpAsyncMmaPipeline, isIdentityEpilogue, type CpAsyncMmaPolicy, type GemmEpilogue } from '@tilekit/gemm';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { getDType } from '@tilekit/numeric';
import { makeTensorView } from '@tilekit/tile';
import {
  GEMM_ALLOCATION_ALIGNMENT,
  gemmEpilogueArgs,
  gemmEpilogueName,
  gemmEpilogueParams,
  gemmSharedPredicates,
  splitGemmEpilogue,
  type GemmAlignment,
  type GemmEpilogueParams,
  type GemmLaunch,
} from '../gemmInstance.ts';
import { gemmPointerParams } from '../gemmPointerParams.ts';
import {
  GEMM_MAX_BATCH,
  GEMM_MAX_DIM,
  gemmOperandMajors,
  gemmVectorReadElements,
  type CheckedGemmProblem,
  type GemmDType,
  type GemmLayoutName,
} from '../gemmProblem.ts';

/** The Policy of one sm_80 GEMM instance (the operand majors follow from `layout`). */
export interface GemmSm80Policy extends Omit<CpAsyncMmaPolicy, 'aMajor' | 'bMajor'> {
  readonly dtype: GemmDType;
  readonly layout: GemmLayoutName;
  /** C elements per epilogue store: 2 needs n and ldc even; 1 runs any shape. */
  readonly cVector: 1 | 2;
  /** The epilogue functor (default none: no alpha or bias parameter). */
  readonly epilogue?: GemmEpilogue;
}

/** Elements per 16-byte cp.async vector of a 2-byte type: leading dimensions and the operands' addresses must keep rows 16-byte aligned. */
export const SM80_COPY_ELEMENTS = 8;

function params(policy: GemmSm80Policy, target: Target) {
  return gemmPointerParams(target.dtypeType(policy.dtype), { ab: 16, c: policy.cVector * getDType(policy.dtype).bytes });
}

type GemmSm80Params = ReturnType<typeof params> & Partial<GemmEpilogueParams>;

function gemmSm80Key(policy: GemmSm80Policy, epilogue: GemmEpilogue, target: Target): InstanceKey {
  const { tileM, tileN, tileK, warps, epilogue: _e, ...rest } = policy;
  const named = isIdentityEpilogue(epilogue) ? {} : { epilogue: gemmEpilogueName(epilogue) };
  return instanceKey(
    'gemm_sm80_mma',
    { ...rest, tile: [tileM, tileN, tileK], warps: [warps[0], warps[1]], target: target.name, ...named },
    {
      tags: {
        dtype: '',
        layout: '',
        tile: '',
        warps: 'w',
        stages: 's',
        cVector: 'v',
        target: '',
        ...(isIdentityEpilogue(epilogue) ? {} : { epilogue: '' }),
      },
    },
  );
}

/**
 * One sm_80 GEMM kernel: cp.async multistage pipeline, ldmatrix + mma.sync block GEMM. Dynamic
 * shared memory: the pipeline's (incl. 1024 of alignment slack).
 */
export class GemmSm80Instance extends KernelInstance<GemmSm80Policy, GemmSm80Params> {
  readonly pipeline: CpAsyncMmaPipeline;
  readonly dtype: GemmDType;
  readonly epilogue: GemmEpilogue;
  protected readonly sourceHeader = { title: 'gemm (sm_80 pipeline)', generator: '@tilekit/kernel-gemm' };

  constructor(policy: GemmSm80Policy, target: Target = sm80) {
    const { policy: kept, plain, epilogue } = splitGemmEpilogue(policy);
    const majors = gemmOperandMajors(policy.layout);
    const pipeline = new CpAsyncMmaPipeline({ ...plain, aMajor: majors.a, bMajor: majors.b });
    const sig: GemmSm80Params = { ...params(kept, target), ...gemmEpilogueParams(epilogue, policy.dtype, target) };
    const key = gemmSm80Key(kept, epilogue, target);
    super({ key, policy: kept, target, params: sig, threads: pipeline.threads, sharedBytes: pipeline.sharedBytes });
    this.pipeline = pipeline;
    this.epilogue = epilogue;
    this.dtype = policy.dtype;
  }

  /**
   * Why this instance cannot run `problem` with pointers of `alignment` (one line per broken
   * predicate); empty when it can. Ragged M, N and K are fine (zero-filled copies, predicated
   * stores), K included: a K of 77 runs when lda and ldb keep rows 16-byte aligned (e.g. 80). What
   * is rejected is a leading dimension or batch stride that is not a multiple of 8 elements, or an
   * A/B address not 16-byte aligned: 16-byte cp.async needs aligned rows (no scalar fallback here).
   */
  unsupported(problem: CheckedGemmProblem, alignment: GemmAlignment = GEMM_ALLOCATION_ALIGNMENT): string[] {
    const shared = gemmSharedPredicates(this, problem, alignment);
    const out = shared.head;
    const v = SM80_COPY_ELEMENTS;
    if (problem.lda % v !== 0) out.push(`lda = ${problem.lda} is not a multiple of ${v} (16-byte cp.async rows; no scalar fallback)`);
    if (problem.ldb % v !== 0) out.push(`ldb = ${problem.ldb} is not a multiple of ${v} (16-byte cp.async rows; no scalar fallback)`);
    if (alignment.a % 16 !== 0) out.push(`a address aligned to ${alignment.a} bytes, cp.async needs 16`);
    if (alignment.b % 16 !== 0) out.push(`b address aligned to ${alignment.b} bytes, cp.async needs 16`);
    const cv = this.policy.cVector;
    out.push(...shared.cStore);
    if (this.pipeline.gridSize(problem.m, problem.n) > 2 ** 31 - 1) out.push('more than 2^31 − 1 block tiles');
    if (problem.batch > 1) {
      if (problem.batchStrideA % v !== 0)
        out.push(`batchStrideA = ${problem.batchStrideA} is not a multiple of ${v} (16-byte cp.async rows)`);
      if (problem.batchStrideB % v !== 0)
        out.push(`batchStrideB = ${problem.batchStrideB} is not a multiple of ${v} (16-byte cp.async rows)`);
      if (problem.batchStrideC % cv !== 0)
        out.push(`batchStrideC = ${problem.batchStrideC} is not a multiple of the ${cv}-element C store`);
    }
    return out;
  }

  /**
   * A row's last 16-byte cp.async reads a whole vector (the bytes past the row are zero-filled, not
   * used), so each operand must be addressable up to its last row's contiguous length rounded up to
   * SM80_COPY_ELEMENTS.
   */
  readElements(problem: CheckedGemmProblem): { readonly a: number; readonly b: number } {
    return gemmVectorReadElements(problem, SM80_COPY_ELEMENTS);
  }

  /** Dispatch preference among instances that run `problem` (lower is better): the widest C store. */
  preference(_problem: CheckedGemmProblem): readonly number[] {
    return [-this.policy.cVector];
  }

  /** The launch: grid [block tiles (grouped rasterization), batch, 1], one block of `threads`, the pipeline's dynamic shared memory. */
  launch(problem: CheckedGemmProblem): GemmLaunch {
    return {
      grid: [this.pipeline.gridSize(problem.m, problem.n), problem.batch, 1],
      block: [this.threads, 1, 1],
      sharedBytes: this.sharedBytes,
    };
  }

  /** Kernel argument values: the operand addresses, sizes, leading dimensions and batch strides (and the epilogue's alpha and bias). */
  args(problem: CheckedGemmProblem, a: bigint, b: bigint, c: bigint, bias?: bigint): KernelArgValues<GemmSm80Params> {
    const p = problem;
    const base = {
      a,
      b,
      c,
      m: p.m,
      n: p.n,
      k: p.k,
      lda: p.lda,
      ldb: p.ldb,
      ldc: p.ldc,
      batch_stride_a: p.batchStrideA,
      batch_stride_b: p.batchStrideB,
      batch_stride_c: p.batchStrideC,
    };
    return { ...base, ...gemmEpilogueArgs(this.epilogue, p, bias) };
  }

  /** Adds the kernel to a translation unit. */
  emit(src: SourceBuilder): void {
    const p = this.policy;
    const e = getDType(p.dtype).bytes;
    const v = SM80_COPY_ELEMENTS;
    const majors = gemmOperandMajors(p.layout);
    const max = { max: GEMM_MAX_DIM };
    // Storage order [strided, contiguous]; the contiguous length is rounded up to the vector (the tail is zero-filled, not read).
    const operand = (name: 'a' | 'b', major: 'K' | 'MN', mn: string) => {
      const ld = symbol(`ld${name}`, { ...max, multipleOf: v });
      const cols = symbol(`${name}_cols`, { max: GEMM_MAX_DIM + v, multipleOf: v });
      const rows = symbol(major === 'K' ? mn : 'k', max);
      return makeNaiveTensorDescriptor([rows, cols], [ld, 1], { vectorLength: v });
    };
    const aDesc = operand('a', majors.a, 'm');
    const bDesc = operand('b', majors.b, 'n');
    const cDesc = makeNaiveTensorDescriptor(
      [symbol('m', max), symbol('n', { ...max, multipleOf: p.cVector })],
      [symbol('ldc', { ...max, multipleOf: p.cVector }), 1],
      { vectorLength: p.cVector },
    );
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads, minBlocksPerSm: 1 } }, (b, args) => {
      const batch = b.let('batch', int32, cast(this.target.blockIdx('y'), int32), { range: [0, GEMM_MAX_BATCH - 1] });
      const at = (ptr: typeof args.a, stride: typeof args.batch_stride_a, name: string) =>
        b.let(name, ptr.type, add(ptr, mul(cast(batch, int64), stride)));
      const roundUp = (x: typeof args.k, name: string) => b.let(name, int32, bitAnd(add(x, v - 1), -v));
      const aLen = majors.a === 'K' ? args.k : args.m;
      const bLen = majors.b === 'K' ? args.k : args.n;
      const aCols = roundUp(aLen, 'a_cols');
      const bCols = roundUp(bLen, 'b_cols');
      this.pipeline.emit(b, this.target, {
        a: { view: makeTensorView(at(args.a, args.batch_stride_a, 'a_batch'), aDesc, { elementBytes: e }), contiguousLength: aLen },
        b: { view: makeTensorView(at(args.b, args.batch_stride_b, 'b_batch'), bDesc, { elementBytes: e }), contiguousLength: bLen },
        m: args.m,
        n: args.n,
        k: args.k,
        c: makeTensorView(at(args.c, args.batch_stride_c, 'c_batch'), cDesc, { elementBytes: e }),
        symbols: { m: args.m, n: args.n, k: args.k, lda: args.lda, ldb: args.ldb, ldc: args.ldc, a_cols: aCols, b_cols: bCols },
        ...(args.alpha === undefined
          ? {}
          : { epilogue: { functor: this.epilogue, alpha: args.alpha, ...(args.bias === undefined ? {} : { bias: args.bias }) } }),
      });
    });
  }
}
