// example_gemm: generates the GEMM kernel the problem dispatches to, compiles it, prints the
// instance, its resources and launch, computes the CPU reference (-v=1; sampled C elements for big
// problems), and on a GPU runs, times and validates it. Without a CUDA device it says so and exits 0
// after the CPU part. `-arch` picks the kernel family: sm90a (TMA + wgmma) or sm80 (cp.async +
// mma.sync; built for the device's arch, so it also runs on Hopper); default the device's own;
// gfx942 (MI300) emits and compiles the HIP kernel with clang-19 and runs the CPU reference (gemmGfx942Example.ts).
import { referenceGemm } from '@tilekit/gemm';
import {
  ArgParseError,
  ArgParser,
  checkErr,
  fillTensor,
  flagErrorOf,
  formatTable,
  HostTensor,
  parseFillSpec,
  Prng,
  summarizeTimes,
  tflops,
  type ParsedArgs,
} from '@tilekit/host';
import {
  buildGemmKernel,
  checkGemmProblem,
  compileGemmInstance,
  findAnyGemmInstance,
  formatGemmProblem,
  GEMM_ARCHS,
  gemmOperandElements,
  gemmOperandStorage,
  gemmProblemFlops,
  gemmReferenceArgs,
  GemmInstance,
  GemmSm80Instance,
  NoGemmInstanceError,
  resolveGemmArch,
  selectGemmInstanceFor,
  type AnyGemmInstance,
  type CheckedGemmProblem,
  type GemmArch,
  type GemmLayoutName,
  type GemmProblem,
} from '@tilekit/kernel-gemm';
import { absoluteThreshold, ArgumentError, decode, relativeThreshold } from '@tilekit/numeric';
import { Device, NvccCompiler, NvrtcCompiler, probe, timeLaunches, type Compiler, type DeviceBuffer } from '@tilekit/runtime';
import { runGemmGfx942Example } from './gemmGfx942Example.ts';

/** The example's flags (CK style: `-key=value`, `-?` for help); strides of 0 mean packed. */
export const gemmParser = new ArgParser(
  'example_gemm',
  'C = A·B on sm_90a (warp-specialized TMA + wgmma) or sm_80 (cp.async + mma.sync), fp32 accumulation; A and B row- or column-major, C row-major',
)
  .int('m', 3840, 'rows of A and C', { min: 1 })
  .int('n', 4096, 'columns of B and C', { min: 1 })
  .int('k', 2048, 'the reduction dimension (columns of A, rows of B)', { min: 1 })
  .int('b', 1, 'batch: independent products C[i] = A[i]·B[i] (packed batch strides)', { min: 1 })
  .int('stride_a', 0, 'leading dimension of A in elements: row stride if R, column stride if C (0: packed)', { min: 0 })
  .int('stride_b', 0, 'leading dimension of B in elements: row stride if R, column stride if C (0: packed)', { min: 0 })
  .int('stride_c', 0, 'row stride of C in elements (0: packed)', { min: 0 })
  .choice('a_layout', 'R', ['R', 'C'], 'A storage: R row-major M×K (K contiguous), C column-major (M contiguous)')
  .choice('b_layout', 'C', ['R', 'C'], 'B storage: C column-major K×N (K contiguous, i.e. stored N×K), R row-major (N contiguous)')
  .choice('prec', 'fp16', ['fp16', 'bf16'], 'data type of A, B and C')
  .bool('v', true, 'validate against the CPU reference (sampled C elements when m·n·k·b > 2^30)')
  .int('warmup', 10, 'untimed launches first', { min: 0 })
  .int('repeat', 50, 'timed launches (median reported)', { min: 1 })
  .int('seed', 11939, 'seed of the input fill (A from seed, B from seed + 1)')
  .string('init', 'uf:-1,1', 'input fill (uf, ui, nf, ni, tf, constant:v; with :a,b ranges)', (text) => void parseFillSpec(text, '-init'))
  .string('instance', '', 'run this catalog instance instead of the dispatched one (sm_90a or sm_80 family)', checkInstanceName)
  .choice(
    'arch',
    'device',
    ['device', ...GEMM_ARCHS, 'gfx942'],
    'kernel family: sm90a (TMA + wgmma) or sm80 (cp.async + mma.sync, built for the device: ' +
      "sm_80, or sm_90a on Hopper); device: the GPU's own (sm90a without a GPU); gfx942: the MI300 kernel, " +
      'emitted as HIP and compiled by clang-19, not run',
  )
  .choice('compiler', 'nvcc', ['nvcc', 'nvrtc'], 'kernel compiler (nvrtc: only where libnvrtc is installed)');

/** `-instance`: empty (dispatch) or the name of an instance of either catalog. */
function checkInstanceName(name: string): void {
  if (name !== '' && findAnyGemmInstance(name) === undefined)
    throw new ArgParseError('-instance', `-instance=${name}: no such instance in the gemm catalogs (sm_90a, sm_80)`);
}

type GemmFlags = typeof gemmParser extends ArgParser<infer T> ? T : never;
/** The example's parsed flags. */
export type GemmArgs = ParsedArgs<GemmFlags>;

/**
 * BLAS-style name of an (A, B) storage pair, as `GemmProblem.layout` spells it (see
 * `GEMM_LAYOUTS`): A row-major is `t` (Aᵀ column-major), column-major `n`; B column-major `n`,
 * row-major `t`. So R/C → tn, C/C → nn, R/R → tt, C/R → nt.
 */
export function layoutFromFlags(aLayout: 'R' | 'C', bLayout: 'R' | 'C'): GemmLayoutName {
  return `${aLayout === 'R' ? 't' : 'n'}${bLayout === 'C' ? 'n' : 't'}`;
}

/** The problem the flags describe (its layout from `-a_layout` / `-b_layout`; strides of 0 left to the defaults). */
export function problemFromArgs(args: GemmArgs): GemmProblem {
  const [lda, ldb, ldc] = [args.get('stride_a'), args.get('stride_b'), args.get('stride_c')];
  return {
    dtype: args.get('prec'),
    m: args.get('m'),
    n: args.get('n'),
    k: args.get('k'),
    batch: args.get('b'),
    layout: layoutFromFlags(args.get('a_layout'), args.get('b_layout')),
    ...(lda !== 0 ? { lda } : {}),
    ...(ldb !== 0 ? { ldb } : {}),
    ...(ldc !== 0 ? { ldc } : {}),
  };
}

// The problem field an ArgumentError names -> the flag it came from.
const FLAG_OF: Readonly<Record<string, keyof GemmFlags>> = {
  'problem.m': 'm',
  'problem.n': 'n',
  'problem.k': 'k',
  'problem.batch': 'b',
  'problem.lda': 'stride_a',
  'problem.ldb': 'stride_b',
  'problem.ldc': 'stride_c',
  'problem.dtype': 'prec',
};

/** The `-arch` flag as dispatch takes it: undefined for `device` (the device's own family). */
function archFlag(args: GemmArgs): GemmArch | undefined {
  const arch = args.get('arch');
  if (arch === 'gfx942') throw new ArgParseError('-arch', '-arch=gfx942 has no CUDA instance (runGemmExample takes it to the gfx942 path)');
  return arch === 'device' ? undefined : arch;
}

/** The family of an instance, as `-arch` spells it. */
function familyOf(instance: AnyGemmInstance): GemmArch {
  return instance instanceof GemmInstance ? 'sm90a' : 'sm80';
}

/**
 * The instance that runs the flags' problem on a device of `deviceArch` (undefined: no GPU): the
 * one dispatch by target picks (`-arch`, default the device's family), or `-instance` (either
 * family; it must agree with an explicit `-arch` and, on a GPU, be built for its arch), judged by
 * the instance's own predicates (a rejection is the dispatcher's `NoGemmInstanceError` naming why).
 * Throws `ArgParseError` naming `-arch` (a family the device cannot run, or a device no family is
 * built for) or `-instance`.
 */
export function pickInstance(
  args: GemmArgs,
  deviceArch?: string,
): { readonly instance: AnyGemmInstance; readonly problem: CheckedGemmProblem } {
  const name = args.get('instance');
  const arch = archFlag(args);
  checkInstanceName(name);
  const named = name === '' ? undefined : findAnyGemmInstance(name);
  const options = { ...(arch === undefined ? {} : { arch }), ...(deviceArch === undefined ? {} : { deviceArch }) };
  try {
    resolveGemmArch(options);
  } catch (error) {
    if (error instanceof ArgumentError) throw new ArgParseError('-arch', `-arch=${args.get('arch')}: ${error.message}`);
    throw error;
  }
  const checked = checkGemmProblem(problemFromArgs(args));
  if (named === undefined) return { instance: selectGemmInstanceFor(checked, options), problem: checked };
  if (arch !== undefined && familyOf(named) !== arch)
    throw new ArgParseError('-instance', `-instance=${name}: an ${familyOf(named)} instance, but -arch=${arch}`);
  if (deviceArch !== undefined && named.target.name !== deviceArch) {
    throw new ArgParseError(
      '-instance',
      `-instance=${name}: built for ${named.target.name}, this GPU is ${deviceArch}` +
        `${familyOf(named) === 'sm80' ? ` (the ${deviceArch} build ends _${deviceArch})` : ''}`,
    );
  }
  const reasons = named.unsupported(checked);
  if (reasons.length === 0) return { instance: named, problem: checked };
  throw new NoGemmInstanceError(checked, [{ instance: named.name, reasons }], 0);
}

/** The compiler `-compiler` names; throws CompilerUnavailableError (typed: exit 2) before any work when it is missing. */
function makeCompiler(kind: 'nvcc' | 'nvrtc'): Compiler {
  return kind === 'nvcc' ? new NvccCompiler() : new NvrtcCompiler();
}

/** Above this many multiply-adds (m·n·k·batch) the CPU reference checks a sample of C. */
export const FULL_REFERENCE_MAX_MACS = 2 ** 30;
/** Above this many elements in any operand the CPU reference checks a sample of C (memory). */
export const FULL_REFERENCE_MAX_ELEMENTS = 2 ** 25;

/** Expected C values at some element offsets, with numeric's K-dependent tolerances. */
export interface GemmReferenceCheck {
  /** Element offsets into C (batch·batchStrideC + i·ldc + j). */
  readonly offsets: Float64Array;
  /** The reference value at each offset. */
  readonly want: Float64Array;
  /** True when `offsets` is a sample rather than all of C's m·n·batch elements. */
  readonly sampled: boolean;
  readonly rtol: number;
  readonly atol: number;
}

/** Values of a 1-D tensor, decoded. */
function decodeAll(t: HostTensor): Float64Array {
  const out = new Float64Array(t.size);
  for (let i = 0; i < out.length; i++) out[i] = t.at(i);
  return out;
}

/**
 * The CPU reference of `p` (A and B as flat tensors of their strided extents): `referenceGemm` over
 * the whole problem, or, when `sample` is a count, about that many C elements: in the first, the
 * last and one random matrix, a grid of rows × columns drawn from `seed` that includes the first
 * and last row and column (bit-identical to the full reference there: the same terms in the same
 * order). Tolerances:
 * `relativeThreshold` / `absoluteThreshold(dtype, dtype, fp32, max |C|, k)` as in gemm.gpu.spec.ts
 * (max over the checked elements).
 */
export function gemmReferenceCheck(
  p: CheckedGemmProblem,
  a: HostTensor,
  b: HostTensor,
  options: { readonly sample?: number; readonly seed?: number } = {},
): GemmReferenceCheck {
  const common = { inputType: p.dtype, outType: p.dtype } as const;
  const storage = gemmOperandStorage(p.layout);
  let offsets: Float64Array;
  let want: Float64Array;
  if (options.sample === undefined) {
    const c = referenceGemm(gemmReferenceArgs(p, decodeAll(a), decodeAll(b)));
    offsets = new Float64Array(p.batch * p.m * p.n);
    want = new Float64Array(offsets.length);
    let at = 0;
    for (let x = 0; x < p.batch; x++) {
      for (let i = 0; i < p.m; i++) {
        for (let j = 0; j < p.n; j++, at++) {
          offsets[at] = x * p.batchStrideC + i * p.ldc + j;
          want[at] = c[offsets[at]!]!;
        }
      }
    }
  } else {
    // A grid of sampled rows × columns (the first and last of each included) per sampled matrix:
    // one referenceGemm over the gathered rows of A and columns of B decodes 1/64 of what
    // independent 1×1×k products would.
    const prng = new Prng(options.seed ?? 0);
    const batches = [...new Set([0, p.batch - 1, prng.nextInt(0, p.batch - 1)])].sort((x, y) => x - y);
    const side = Math.max(2, Math.ceil(Math.sqrt(options.sample / batches.length)));
    const pick = (extent: number): number[] => {
      if (extent <= side) return Array.from({ length: extent }, (_, i) => i);
      const picked = new Set([0, extent - 1]);
      while (picked.size < side) picked.add(prng.nextInt(0, extent - 1));
      return [...picked].sort((x, y) => x - y);
    };
    const out: number[] = [];
    const values: number[] = [];
    for (const x of batches) {
      const rows = pick(p.m);
      const cols = pick(p.n);
      const aSub = new Float64Array(rows.length * p.k);
      const bSub = new Float64Array(cols.length * p.k);
      // Row i of A and column j of B, wherever their layouts put them (K-contiguous or strided).
      const [aRow, aK] = storage.a === 'row' ? [p.lda, 1] : [1, p.lda];
      const [bCol, bK] = storage.b === 'col' ? [p.ldb, 1] : [1, p.ldb];
      rows.forEach((i, r) => {
        for (let q = 0, at = x * p.batchStrideA + i * aRow; q < p.k; q++, at += aK) aSub[r * p.k + q] = a.at(at);
      });
      cols.forEach((j, c) => {
        for (let q = 0, at = x * p.batchStrideB + j * bCol; q < p.k; q++, at += bK) bSub[c * p.k + q] = b.at(at);
      });
      const sub = referenceGemm({
        ...common,
        m: rows.length,
        n: cols.length,
        k: p.k,
        a: { data: aSub, layout: 'row' },
        b: { data: bSub, layout: 'col' },
      });
      rows.forEach((i, r) =>
        cols.forEach((j, c) => {
          out.push(x * p.batchStrideC + i * p.ldc + j);
          values.push(sub[r * cols.length + c]!);
        }),
      );
    }
    offsets = Float64Array.from(out);
    want = Float64Array.from(values);
  }
  let max = 0;
  for (const v of want) max = Math.max(max, Math.abs(v));
  return {
    offsets,
    want,
    sampled: options.sample !== undefined,
    rtol: relativeThreshold(p.dtype, p.dtype, 'fp32', p.k),
    atol: absoluteThreshold(p.dtype, p.dtype, 'fp32', max, p.k),
  };
}

/** About how many C elements the sampled CPU reference checks (a 64 × 64 grid per sampled matrix). */
export const SAMPLED_C_ELEMENTS = 4096;

function log2(x: number): string {
  return `2^${Math.log2(x).toFixed(1)}`;
}

/**
 * A and B filled from `-init` and `-seed` (`elems` elements each), and with `-v=1` the CPU reference
 * of C (every element, or a sample for big problems), logged with its tolerance.
 */
export function inputsAndReference(
  args: GemmArgs,
  p: CheckedGemmProblem,
  elems: { readonly a: number; readonly b: number; readonly c: number },
  log: (line: string) => void,
): { readonly a: HostTensor; readonly b: HostTensor; readonly check: GemmReferenceCheck | undefined } {
  const seed = args.get('seed');
  const a = fillTensor(HostTensor.empty(p.dtype, [elems.a]), args.get('init'), seed);
  const b = fillTensor(HostTensor.empty(p.dtype, [elems.b]), args.get('init'), seed + 1);
  if (!args.get('v')) return { a, b, check: undefined };
  const macs = gemmProblemFlops(p) / 2;
  const cElements = p.batch * p.m * p.n;
  const full = macs <= FULL_REFERENCE_MAX_MACS && Math.max(elems.a, elems.b, elems.c) <= FULL_REFERENCE_MAX_ELEMENTS;
  const started = performance.now();
  const check = gemmReferenceCheck(p, a, b, full ? {} : { sample: SAMPLED_C_ELEMENTS, seed });
  const ms = (performance.now() - started).toFixed(1);
  const tolerance = `rtol ${check.rtol.toExponential(2)}, atol ${check.atol.toExponential(2)} for K = ${p.k}`;
  if (full) log(`CPU reference: all ${cElements} C elements in ${ms} ms (${tolerance})`);
  else {
    const why =
      macs > FULL_REFERENCE_MAX_MACS
        ? `m·n·k·b = ${log2(macs)} > 2^30 multiply-adds`
        : `an operand exceeds ${log2(FULL_REFERENCE_MAX_ELEMENTS)} elements`;
    log(
      `CPU reference: SAMPLED ${check.offsets.length} of ${cElements} C elements (a grid of ` +
        `rows × columns incl. the first and last; ${why}, the full reference would take too ` +
        `long) in ${ms} ms (${tolerance})`,
    );
  }
  return { a, b, check };
}

/**
 * Runs the example; `log` receives each output line. Returns the exit code: 0 on success (also
 * when no GPU is present), 1 when validation fails or no instance runs the problem. Flags that make
 * no problem throw ArgParseError, a missing `-compiler` CompilerUnavailableError (runCli: exit 2).
 */
export async function runGemmExample(args: GemmArgs, log: (line: string) => void = console.log): Promise<number> {
  if (args.get('arch') === 'gfx942') return runGemmGfx942Example(args, log);
  const compiler = makeCompiler(args.get('compiler'));
  // The device (if any) decides the default family and the sm_80 build.
  const probed = probe();
  const hasDevice = probed.driver && probed.deviceCount > 0;
  const deviceArch = hasDevice ? Device.open(0).arch : undefined;
  let instance: AnyGemmInstance;
  let problem: CheckedGemmProblem;
  try {
    ({ instance, problem } = pickInstance(args, deviceArch));
  } catch (error) {
    if (error instanceof NoGemmInstanceError) {
      log(error.message);
      return 1;
    }
    if (error instanceof ArgumentError && !(error instanceof ArgParseError)) throw flagErrorOf(args, error, FLAG_OF);
    throw error;
  }
  const p = problem;
  const launch = instance.launch(p);
  const policy = instance.policy;
  const storage = gemmOperandStorage(p.layout);
  const major = (s: 'row' | 'col'): string => (s === 'row' ? 'row-major' : 'column-major');
  log(
    `example_gemm: ${formatGemmProblem(problemFromArgs(args))}: A [${p.m}, ${p.k}] ${major(storage.a)} (lda ${p.lda}), B [${p.k}, ${p.n}] ${major(storage.b)} (ldb ${p.ldb}), ` +
      `C [${p.m}, ${p.n}] row-major (ldc ${p.ldc}), batch ${p.batch}`,
  );
  const threads =
    instance instanceof GemmInstance
      ? `${instance.threads} threads (setmaxnreg ${instance.policy.consumerRegisters} consumers / ${instance.policy.producerRegisters} producer)`
      : `${instance.threads} threads (${instance.policy.warps[0]}x${instance.policy.warps[1]} warps, cp.async + mma.sync)`;
  log(
    `instance: ${instance.name} (key ${instance.key.hash}), tile ${policy.tileM}x` +
      `${policy.tileN}x${policy.tileK}, ${policy.stages} stages, ${threads}, ${policy.cVector}` +
      `-element C stores`,
  );
  log(`launch: grid [${launch.grid.join(', ')}], block [${launch.block.join(', ')}], ${launch.sharedBytes} B dynamic shared memory`);

  const compiled = await compileGemmInstance(instance, compiler);
  const r = compiled.resources;
  log(
    formatTable(
      ['compiler', 'arch', 'registers', 'static smem (B)', 'dynamic smem (B)', 'spills st/ld (B)', 'stack (B)', 'cached'],
      [
        [
          compiled.compilerVersion.split('|')[0]!.trim(),
          compiled.arch,
          r.registers,
          r.sharedBytes,
          instance.sharedBytes,
          `${r.spillStores}/${r.spillLoads}`,
          r.stackFrame,
          compiled.cached,
        ],
      ],
    ),
  );

  const validate = args.get('v');
  // A and B as far as the instance reads them (sm80 reads each row's tail as a whole 16-byte vector).
  const elems = { ...gemmOperandElements(p), ...(instance instanceof GemmSm80Instance ? instance.readElements(p) : {}) };
  const { a, b, check } = inputsAndReference(args, p, elems, log);

  if (!hasDevice) {
    log(
      `no CUDA device found (${probed.reason ?? 'the driver reports no devices'}): the kernel ` +
        `was generated and compiled${validate ? ' and the CPU reference computed' : ''}; nothing ` +
        `ran on a GPU.`,
    );
    return 0;
  }
  const device = Device.open(0);
  const kernel = await buildGemmKernel(instance, { device, compiler });
  const buffers: DeviceBuffer[] = [];
  try {
    const aBuf = device.upload(a.bytes());
    buffers.push(aBuf);
    const bBuf = device.upload(b.bytes());
    buffers.push(bBuf);
    const cBuf = device.alloc(elems.c * 2).fill(0);
    buffers.push(cBuf);
    const run = kernel.prepare(p, { a: aBuf, b: bBuf, c: cBuf }); // validated once, before any launch
    const t = summarizeTimes(timeLaunches(device, run.launch, { warmup: args.get('warmup'), repeat: args.get('repeat') }));
    const flops = gemmProblemFlops(p);
    log(
      `${device.name}: ${t.median.toFixed(4)} ms (median of ${t.n} after ${args.get('warmup')} ` +
        `warmup; min ${t.min.toFixed(4)}, max ${t.max.toFixed(4)}), ` +
        `${tflops(flops, t.median).toFixed(1)} TFLOP/s (${(flops / 1e12).toFixed(3)} TFLOP)`,
    );
    if (check === undefined) return 0;
    const bytes = cBuf.copyToHost();
    const out = new Uint16Array(bytes.buffer, bytes.byteOffset, elems.c);
    const got = new Float64Array(check.offsets.length);
    for (let i = 0; i < got.length; i++) got[i] = decode(p.dtype, out[check.offsets[i]!]!);
    const result = checkErr(got, check.want, { rtol: check.rtol, atol: check.atol, label: check.sampled ? 'c (sampled)' : 'c' });
    log(result.message);
    log(`valid: ${result.ok ? 'yes' : 'no'}${check.sampled ? ` (${check.offsets.length} sampled C elements)` : ''}`);
    return result.ok ? 0 : 1;
  } finally {
    device.synchronize();
    for (const buf of buffers) buf.dispose();
    kernel.dispose();
  }
}
