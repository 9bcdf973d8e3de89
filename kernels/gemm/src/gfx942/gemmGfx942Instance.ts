// Kernel instances of the GEMM operator for gfx942 (MI300, CDNA3): a Policy bound to the MFMA + LDS
// "compute V3"-style pipeline of @tilekit/gemm, emitted as self-contained HIP. Emitted and compiled
// (clang-19) only: no AMD device runs them here.
import { add, cast, gfx942, instanceKey, int32, int64, KernelInstance, mul, type SourceBuilder, type Target } from '@tilekit/codegen';
import { MfmaLdsPipeline, type MfmaLdsPipelinePolicy } from '@tilekit/gemm';
import { makeNaiveTensorDescriptor, symbol } from '@tilekit/layout';
import { getDType, TilekitError } from '@tilekit/numeric';
import { makeTensorView } from '@tilekit/tile';
import { gemmPointerParams } from '../gemmPointerParams.ts';
import { GEMM_MAX_BATCH, GEMM_MAX_DIM, type CheckedGemmProblem, type GemmDType, type GemmLayoutName } from '../gemmProblem.ts';

/** The Policy of one gfx942 GEMM instance: the pipeline's shape plus the vector widths of its global accesses. */
export interface GemmGfx942Policy extends MfmaLdsPipelinePolicy {
  readonly dtype: GemmDType;
  readonly layout: GemmLayoutName;
  /** A/B elements per global load along K: 8 (16 bytes) needs k, lda, ldb multiples of 8 and 16-byte aligned A/B; 1 runs any shape. */
  readonly abVector: 1 | 8;
  /** C elements per store along N: 4 (each lane's run of the transposed MFMA C) needs n, ldc multiples of 4; 1 runs any shape. */
  readonly cVector: 1 | 4;
}

/** Address alignment (bytes) of the A, B and C pointers (hipMalloc gives at least 256). */
export interface GemmGfx942Alignment {
  readonly a: number;
  readonly b: number;
  readonly c: number;
}

/** A gfx942 GEMM policy names a vector width the kernel does not have. */
export class GemmGfx942PolicyError extends TilekitError {
  constructor(what: string, rule: string, found: string) {
    super('gemm/invalid-gfx942-policy', `GemmGfx942Instance ${what}: ${rule} (got ${found})`);
  }
}

const ALLOCATION_ALIGNMENT: GemmGfx942Alignment = Object.freeze({ a: 256, b: 256, c: 256 });

function gfx942Params(policy: GemmGfx942Policy, target: Target) {
  const bytes = getDType(policy.dtype).bytes;
  return gemmPointerParams(target.dtypeType(policy.dtype), { ab: policy.abVector * bytes, c: policy.cVector * bytes });
}

/**
 * One gfx942 GEMM kernel: C[b] = A[b]·B[b] with A row-major M×K, B stored N×K (the `tn` layout), C
 * row-major M×N, fp32 accumulation. Its key (`gemm_gfx942_…`) is the `extern "C"` entry point; the
 * signature is declared for the `gfx942` target (pointers, sizes, strides; no tensor maps).
 * `unsupported(problem)` lists every predicate a problem breaks, `source()` is the kernel alone as
 * self-contained HIP (clang `-x hip --offload-arch=gfx942 -nogpulib -nogpuinc`).
 */
export class GemmGfx942Instance extends KernelInstance<GemmGfx942Policy, ReturnType<typeof gfx942Params>> {
  readonly pipeline: MfmaLdsPipeline;
  readonly dtype: GemmDType;
  protected readonly sourceHeader = { title: 'gemm', generator: '@tilekit/kernel-gemm (gfx942)' };

  constructor(policy: GemmGfx942Policy) {
    const pipeline = new MfmaLdsPipeline(policy);
    const frozen = Object.freeze({ ...policy });
    if (policy.abVector !== 1 && policy.abVector !== 8)
      throw new GemmGfx942PolicyError('abVector', 'must be 1 or 8', String(policy.abVector));
    if (policy.cVector !== 1 && policy.cVector !== 4) throw new GemmGfx942PolicyError('cVector', 'must be 1 or 4', String(policy.cVector));
    const { tileM, tileN, tileK, warpsM, warpsN, ...rest } = frozen;
    const key = instanceKey(
      'gemm_gfx942',
      { ...rest, tile: [tileM, tileN, tileK], waves: [warpsM, warpsN], target: gfx942.name },
      { tags: { dtype: '', layout: '', tile: '', waves: 'w', abVector: 'va', cVector: 'vc' } },
    );
    const params = gfx942Params(frozen, gfx942);
    // All of its LDS is static (no dynamic LDS).
    super({ key, policy: frozen, target: gfx942, params, threads: pipeline.threads, staticSharedBytes: pipeline.ldsBytes });
    this.pipeline = pipeline;
    this.dtype = policy.dtype;
  }

  /** Static LDS bytes (= `staticSharedBytes`; no dynamic LDS). */
  get ldsBytes(): number {
    return this.staticSharedBytes;
  }

  /** Why this instance cannot run `problem` with pointers of `alignment` (one line per broken predicate); empty when it can. */
  unsupported(problem: CheckedGemmProblem, alignment: GemmGfx942Alignment = ALLOCATION_ALIGNMENT): string[] {
    const out: string[] = [];
    const p = this.policy;
    const e = getDType(this.dtype).bytes;
    if (problem.dtype !== this.dtype) out.push(`dtype ${problem.dtype}: this kernel computes ${this.dtype}`);
    if (problem.layout !== p.layout) out.push(`layout ${problem.layout}: this kernel reads ${p.layout}`);
    if (problem.alpha !== 1) out.push(`alpha ${problem.alpha}: the gfx942 kernels have no epilogue functor (alpha 1 only)`);
    if (problem.bias) out.push('bias: the gfx942 kernels add none');
    if (problem.activation !== 'none') out.push(`activation ${problem.activation}: the gfx942 kernels apply none`);
    const va = p.abVector;
    if (va > 1) {
      if (problem.k % va !== 0) out.push(`k = ${problem.k} is not a multiple of the ${va}-element A/B load`);
      if (problem.lda % va !== 0) out.push(`lda = ${problem.lda} is not a multiple of the ${va}-element A load`);
      if (problem.ldb % va !== 0) out.push(`ldb = ${problem.ldb} is not a multiple of the ${va}-element B load`);
      if (problem.batch > 1 && problem.batchStrideA % va !== 0)
        out.push(`batchStrideA = ${problem.batchStrideA} is not a multiple of the ${va}-element A load`);
      if (problem.batch > 1 && problem.batchStrideB % va !== 0)
        out.push(`batchStrideB = ${problem.batchStrideB} is not a multiple of the ${va}-element B load`);
    }
    if (alignment.a % (va * e) !== 0) out.push(`a address aligned to ${alignment.a} bytes, needs ${va * e}`);
    if (alignment.b % (va * e) !== 0) out.push(`b address aligned to ${alignment.b} bytes, needs ${va * e}`);
    const vc = p.cVector;
    if (vc > 1) {
      if (problem.n % vc !== 0) out.push(`n = ${problem.n} is not a multiple of the ${vc}-element C store`);
      if (problem.ldc % vc !== 0) out.push(`ldc = ${problem.ldc} is not a multiple of the ${vc}-element C store`);
      if (problem.batch > 1 && problem.batchStrideC % vc !== 0)
        out.push(`batchStrideC = ${problem.batchStrideC} is not a multiple of the ${vc}-element C store`);
    }
    if (alignment.c % (vc * e) !== 0) out.push(`c address aligned to ${alignment.c} bytes, needs ${vc * e}`);
    if (this.pipeline.gridSize(problem.m, problem.n) > 2 ** 31 - 1) out.push('more than 2^31 − 1 block tiles');
    return out;
  }

  /** Grid (block tiles, batch) and workgroup size of a launch. */
  launch(problem: CheckedGemmProblem): {
    readonly grid: readonly [number, number, number];
    readonly block: readonly [number, number, number];
  } {
    return { grid: [this.pipeline.gridSize(problem.m, problem.n), problem.batch, 1], block: [this.threads, 1, 1] };
  }

  /** Adds the kernel to a translation unit. */
  emit(src: SourceBuilder): void {
    const p = this.policy;
    const bytes = getDType(p.dtype).bytes;
    const m = symbol('m', { max: GEMM_MAX_DIM });
    const n = symbol('n', { max: GEMM_MAX_DIM, multipleOf: p.cVector });
    const k = symbol('k', { max: GEMM_MAX_DIM, multipleOf: p.abVector });
    const lda = symbol('lda', { max: GEMM_MAX_DIM, multipleOf: p.abVector });
    const ldb = symbol('ldb', { max: GEMM_MAX_DIM, multipleOf: p.abVector });
    const ldc = symbol('ldc', { max: GEMM_MAX_DIM, multipleOf: p.cVector });
    const aDesc = makeNaiveTensorDescriptor([m, k], [lda, 1], { vectorLength: p.abVector });
    const bDesc = makeNaiveTensorDescriptor([n, k], [ldb, 1], { vectorLength: p.abVector });
    const cDesc = makeNaiveTensorDescriptor([m, n], [ldc, 1], { vectorLength: p.cVector });
    this.signature.defineEntry(src, { launchBounds: { maxThreads: this.threads } }, (b, args) => {
      const batch = b.let('batch', int32, cast(this.target.blockIdx('y'), int32), { range: [0, GEMM_MAX_BATCH - 1] });
      const at = (ptr: typeof args.a, stride: typeof args.batch_stride_a, name: string) =>
        b.let(name, ptr.type, add(ptr, mul(cast(batch, int64), stride)));
      this.pipeline.emit(b, this.target, {
        a: makeTensorView(at(args.a, args.batch_stride_a, 'a_batch'), aDesc, { elementBytes: bytes }),
        b: makeTensorView(at(args.b, args.batch_stride_b, 'b_batch'), bDesc, { elementBytes: bytes }),
        c: makeTensorView(at(args.c, args.batch_stride_c, 'c_batch'), cDesc, { elementBytes: bytes }),
        m: args.m,
        n: args.n,
        k: args.k,
        symbols: { m: args.m, n: args.n, k: args.k, lda: args.lda, ldb: args.ldb, ldc: args.ldc },
      });
    });
  }
}
