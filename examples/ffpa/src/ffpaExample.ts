// example_ffpa: plans the FFPA attention forward the flags describe (large head dims: O split into
// column slices across CTAs, one catalog instance per slice), compiles every slice's kernel,
// prints the plan, the instances and their resources, computes the CPU reference (-v=1: fp32 or
// better, P not narrowed; sampled query rows for big problems), and on a GPU runs, times and
// validates. With -bwd the same for the backward dQ, dK, dV (ffpaBwdExample.ts; O and LSE from the
// FFPA forward on the GPU). Without a CUDA device it says so and exits 0 after the CPU part.
import { ATTENTION_FLAG_OF, attentionShapeFromArgs, withAttentionFlags, type AttentionShape } from '@tilekit/example-attention-flags';
import {
  compareWithReference,
  FULL_REFERENCE_MAX_MACS,
  fmhaFwdReferenceCheck,
  SAMPLED_ROWS_PER_HEAD,
  type FmhaFwdReferenceCheck,
} from '@tilekit/example-fmha-fwd';
import {
  FMHA_FWD_COMPILE_FLAGS,
  fmhaFwdOperandElements,
  fmhaFwdProblemFlops,
  formatFmhaFwdProblem,
  type CheckedFmhaFwdProblem,
} from '@tilekit/fmha';
import {
  ArgParseError,
  ArgParser,
  fillTensor,
  flagErrorOf,
  formatTable,
  HostTensor,
  summarizeTimes,
  tflops,
  type ParsedArgs,
} from '@tilekit/host';
import {
  checkFfpaBwdProblem,
  checkFfpaProblem,
  ffpaBwdKernelSet,
  FfpaRunner,
  NoFfpaBwdInstanceError,
  NoFfpaInstanceError,
  planFfpa,
  type FfpaPlan,
  type FfpaProblem,
} from '@tilekit/kernel-ffpa';
import { ArgumentError, decode } from '@tilekit/numeric';
import { compileInstance, Device, NvccCompiler, probe, timeLaunches, type DeviceBuffer } from '@tilekit/runtime';
import {
  compileFfpaBwd,
  ffpaBwdInputs,
  ffpaBwdReferenceOf,
  logFfpaBwdPlan,
  runFfpaBwdOnDevice,
  type FfpaBwdPlan,
} from './ffpaBwdExample.ts';

const PROGRAM = 'example_ffpa';

// The shared attention flags with FFPA's texts; redeclared below with FFPA's defaults.
/** The example's flags (CK-tile's tile_example_fmha_fwd spelling: `-key=value`, `-?` for help; `-bwd=1` for the backward). */
export const ffpaParser = withAttentionFlags(
  new ArgParser(
    PROGRAM,
    'FFPA attention for large head dims: forward O = softmax(scale·Q·Kᵀ + mask)·V (Q·Kᵀ in head-dim chunks, O in column slices; -path) ' +
      'or, with -bwd, its backward dQ, dK, dV (dot_do_o + split-D dq_dk_dv + convert_dq; dQ added as it comes, or in key order with -deterministic=1)',
  ),
  {
    seqlen: '1024',
    seqlenExample: '1,17,259,4097',
    headDims: '320 … 1024 in steps of 64; 576 also with -d_v=512',
    headDimV: '= d',
    inputTensors: 'Q/K/V (and dQ/dK/dV)',
    outputTensors: 'O (and dO)',
    precTensors: 'Q, K, V and O (and dO and the gradients)',
  },
  { b: 1, d: 512, prec: 'bf16' },
)
  .choice(
    'path',
    'sm90',
    ['sm90', 'sm80'],
    'sm90: wgmma, TMA, warp-specialized; sm80: FFPA L1 on mma.sync + cp.async (runs on Hopper too); ' +
      "-bwd: the dq_dk_dv kernel's path too (not given: sm90 where its catalog has d = d_v ≤ 512, else sm80)",
  )
  .bool('lse', false, 'also write LSE (fp32, natural log)')
  .bool('bwd', false, 'run the backward dQ, dK, dV instead (O and LSE from the -path forward; implies -lse)')
  .choice(
    'deterministic',
    '0',
    ['0', '1'],
    '-bwd: 1 adds dQ in key order (bitwise reproducible; sm90 path only); 0 adds it as it comes (faster, not reproducible)',
  )
  .bool('v', true, 'validate against the CPU reference (forward: fp32, sampled query rows for big problems; -bwd: fp64, small problems)')
  .int('seed', 11939, 'seed of the input fill (uniform in [-1, 1): Q from seed, K from seed + 1, V from seed + 2, dO from seed + 3)')
  .int('warmup', 5, 'untimed runs first', { min: 0 })
  .int('repeat', 20, 'timed runs (median reported)', { min: 1 });

type FfpaFlags = typeof ffpaParser extends ArgParser<infer T> ? T : never;
export type FfpaArgs = ParsedArgs<FfpaFlags>;

/** An empty problem would compile and launch nothing: `-s` must give at least one query row. */
function checkQueryRows(shape: AttentionShape, seqlens: string): void {
  const rows = 'seqlenQ' in shape ? shape.seqlenQ : shape.seqstartQ.at(-1)!;
  if (rows === 0) throw new ArgParseError('-s', `-s=${seqlens}: the problem needs at least one query row`);
}

/** The problem the flags describe (throws ArgParseError for flags that cannot make one); -bwd implies -lse. */
export function problemFromArgs(args: FfpaArgs): FfpaProblem {
  const shape = attentionShapeFromArgs(args);
  checkQueryRows(shape, args.get('s'));
  return { ...shape, lse: args.get('lse') || args.get('bwd') };
}

/** A problem's typed error as the one-line error of the flag it came from; other errors unchanged. */
function asFlagError(args: FfpaArgs, error: unknown): unknown {
  return error instanceof ArgumentError && !(error instanceof ArgParseError) ? flagErrorOf(args, error, ATTENTION_FLAG_OF) : error;
}

/**
 * The checked problem and its plan. A problem FFPA rejects (`checkFfpaProblem`'s typed error)
 * becomes the one-line error of the flag it came from (exit 2, before anything is compiled).
 */
export function planFromArgs(args: FfpaArgs): FfpaPlan {
  try {
    return planFfpa(checkFfpaProblem(problemFromArgs(args)), { path: args.get('path') });
  } catch (error) {
    throw asFlagError(args, error);
  }
}

/**
 * The backward the flags describe (-bwd): the forward plan with LSE that gives it O and LSE (first,
 * so that head dims and masks FFPA lacks give the forward's one-line flag errors), then
 * `checkFfpaBwdProblem` of the same shape (its typed error becomes the flag's one-line error too,
 * exit 2) and its three kernels (`ffpaBwdKernelSet` on -path when given, else on its default path;
 * throws NoFfpaBwdInstanceError, e.g. for -path=sm90 above d 512).
 */
export function bwdPlanFromArgs(args: FfpaArgs): FfpaBwdPlan {
  const forward = planFromArgs(args);
  const deterministic = args.get('deterministic') === '1';
  if (deterministic && args.given('path') && args.get('path') === 'sm80')
    throw new ArgParseError('-deterministic', '-deterministic=1 needs -path=sm90 (the sm_80 backward adds dQ with atomics)');
  let problem;
  try {
    problem = checkFfpaBwdProblem({ ...attentionShapeFromArgs(args), deterministic });
  } catch (error) {
    throw asFlagError(args, error);
  }
  return { problem, kernels: ffpaBwdKernelSet(problem, args.given('path') ? { path: args.get('path') } : {}), forward };
}

/** Logs the problem, the plan and each column slice's instance. */
export function logPlan(plan: FfpaPlan, log: (line: string) => void): void {
  const p = plan.problem;
  log(`${PROGRAM}: ${formatFmhaFwdProblem(p)}, scale ${p.scale}`);
  log(`plan: ${plan.description}`);
  for (const s of plan.slices) {
    const i = s.instance;
    const launch = i.launch(p.batch, p.nheadQ, p.seqlenQ);
    const cluster = launch.cluster === undefined ? '' : ` in clusters of [${launch.cluster.join(', ')}]`;
    log(
      `slice [${s.offset},${s.offset + s.width}): ${i.name} (key ${i.key.hash}), tile ${i.policy.tileM}x${i.policy.tileN}, ` +
        `${i.threads} threads; grid [${launch.grid.join(', ')}]${cluster}, ${i.sharedBytes} B dynamic smem`,
    );
  }
}

/** Compiles each distinct slice instance with nvcc and logs its registers, shared memory and spills. */
async function compileSlices(plan: FfpaPlan, compiler: NvccCompiler, log: (line: string) => void): Promise<void> {
  const rows: (string | number | boolean)[][] = [];
  for (const instance of new Set(plan.slices.map((s) => s.instance))) {
    const compiled = await compileInstance(instance, compiler, FMHA_FWD_COMPILE_FLAGS);
    const r = compiled.resources;
    const spills = `${r.spillStores}/${r.spillLoads}`;
    rows.push([instance.name, compiled.arch, r.registers, r.sharedBytes, instance.sharedBytes, spills, r.stackFrame, compiled.cached]);
  }
  log(formatTable(['kernel', 'arch', 'registers', 'static smem (B)', 'dynamic smem (B)', 'spills st/ld (B)', 'stack (B)', 'cached'], rows));
}

/** Q, K and V as fp16/bf16 bits, uniform in [-1, 1), from `seed`, `seed + 1` and `seed + 2`. */
function randomInputs(p: CheckedFmhaFwdProblem, seed: number): { q: Uint16Array; k: Uint16Array; v: Uint16Array } {
  const elems = fmhaFwdOperandElements(p);
  const bits = (n: number, s: number): Uint16Array => {
    const b = fillTensor(HostTensor.empty(p.dtype, [Math.max(1, n)]), 'uf:-1,1', s).bytes();
    return new Uint16Array(b.buffer, b.byteOffset, Math.max(1, n));
  };
  return { q: bits(elems.q, seed), k: bits(elems.k, seed + 1), v: bits(elems.v, seed + 2) };
}

/** The CPU reference of the inputs (`referenceAttentionFwd`, or sampled rows above 2^30 multiply-adds), logged. */
function referenceOf(p: CheckedFmhaFwdProblem, data: ReturnType<typeof randomInputs>, seed: number, log: (line: string) => void) {
  const macs = fmhaFwdProblemFlops(p) / 2;
  const full = macs <= FULL_REFERENCE_MAX_MACS;
  const started = performance.now();
  const check = fmhaFwdReferenceCheck(p, data, full ? {} : { sample: SAMPLED_ROWS_PER_HEAD, seed });
  const ms = (performance.now() - started).toFixed(1);
  const tol = `O atol ${check.tolerance.o.atol.toExponential(2)} + rtol ${check.tolerance.o.rtol.toExponential(2)}`;
  const rows = full
    ? `all ${check.rows} query rows`
    : `SAMPLED ${check.rows} query rows (${SAMPLED_ROWS_PER_HEAD} per batch and head incl. the first and last; ` +
      `2^${Math.log2(macs).toFixed(1)} > 2^30 multiply-adds)`;
  log(`CPU reference (fp32 or better, probabilities not narrowed): ${rows} in ${ms} ms (${tol})`);
  return check;
}

/** The open CUDA device, or undefined with the reason there is none. */
function openDevice(): { readonly device?: Device; readonly reason: string } {
  const probed = probe();
  if (probed.driver && probed.deviceCount > 0) return { device: Device.open(0), reason: '' };
  return { reason: probed.reason ?? 'the driver reports no devices' };
}

/**
 * Runs the example (with -bwd: the backward); `log` receives each output line. Returns the exit
 * code: 0 on success (also without a GPU), 1 when validation fails or no instance runs the problem.
 * Bad flags and problems FFPA rejects throw ArgParseError (runCli: one line, exit 2) before anything
 * is compiled.
 */
export async function runFfpaExample(args: FfpaArgs, log: (line: string) => void = console.log): Promise<number> {
  if (args.get('bwd')) return runFfpaBwdExample(args, log);
  let plan: FfpaPlan;
  try {
    plan = planFromArgs(args);
  } catch (error) {
    if (!(error instanceof NoFfpaInstanceError)) throw error;
    log(error.message);
    return 1;
  }
  logPlan(plan, log);
  const compiler = new NvccCompiler();
  await compileSlices(plan, compiler, log);
  const p = plan.problem;
  const data = randomInputs(p, args.get('seed'));
  const check = args.get('v') ? referenceOf(p, data, args.get('seed'), log) : undefined;
  const { device, reason } = openDevice();
  if (device === undefined) {
    const what = `the kernel(s) were generated and compiled${check ? ' and the CPU reference computed' : ''}`;
    log(`no CUDA device found (${reason}): ${what}; nothing ran on a GPU.`);
    return 0;
  }
  return runOnDevice(plan, { device, compiler, data, check, args, log });
}

/** runFfpaExample with -bwd: plans, logs and compiles the backward, its CPU reference (-v=1), and on a GPU runs, times and validates it. */
async function runFfpaBwdExample(args: FfpaArgs, log: (line: string) => void): Promise<number> {
  let plan: FfpaBwdPlan;
  try {
    plan = bwdPlanFromArgs(args);
  } catch (error) {
    if (!(error instanceof NoFfpaBwdInstanceError || error instanceof NoFfpaInstanceError)) throw error;
    log(error.message);
    return 1;
  }
  logFfpaBwdPlan(PROGRAM, plan, log);
  const compiler = new NvccCompiler();
  await compileFfpaBwd(plan.kernels, compiler, log);
  const data = ffpaBwdInputs(plan.problem, args.get('seed'));
  const reference = args.get('v') ? ffpaBwdReferenceOf(plan.problem, data, log) : undefined;
  const { device, reason } = openDevice();
  if (device === undefined) {
    const what = `the backward kernels were generated and compiled${reference ? ' and the CPU reference computed' : ''}`;
    log(`no CUDA device found (${reason}): ${what}; nothing ran on a GPU.`);
    return 0;
  }
  return runFfpaBwdOnDevice(plan, { device, compiler, data, reference, warmup: args.get('warmup'), repeat: args.get('repeat'), log });
}

interface DeviceRun {
  readonly device: Device;
  readonly compiler: NvccCompiler;
  readonly data: ReturnType<typeof randomInputs>;
  readonly check: FmhaFwdReferenceCheck | undefined;
  readonly args: FfpaArgs;
  readonly log: (line: string) => void;
}

/** Builds the runner, uploads the inputs, times warmup + repeat launches back to back, and validates O (and LSE). */
async function runOnDevice(plan: FfpaPlan, r: DeviceRun): Promise<number> {
  const { device, args, log } = r;
  const p = plan.problem;
  const elems = fmhaFwdOperandElements(p);
  const runner = await FfpaRunner.create(p, { device, compiler: r.compiler, path: plan.path });
  const buffers: DeviceBuffer[] = [];
  const keep = (b: DeviceBuffer): DeviceBuffer => (buffers.push(b), b);
  try {
    const [q, k, v] = [keep(device.upload(r.data.q)), keep(device.upload(r.data.k)), keep(device.upload(r.data.v))];
    const o = keep(device.alloc(Math.max(1, elems.o) * 2).fill(0xff));
    const lse = p.lse ? keep(device.alloc(Math.max(1, elems.lse) * 4).fill(0xff)) : undefined;
    const group =
      p.mode === 'group'
        ? { seqstartQ: keep(device.upload(new Int32Array(p.seqstartQ))), seqstartK: keep(device.upload(new Int32Array(p.seqstartK))) }
        : {};
    const run = runner.prepare({ q, k, v, o, ...(lse ? { lse } : {}), ...group }); // validated once, before any launch
    const t = summarizeTimes(timeLaunches(device, run.launch, { warmup: args.get('warmup'), repeat: args.get('repeat') }));
    const flops = fmhaFwdProblemFlops(p);
    log(
      `${device.name}: ${t.median.toFixed(4)} ms (median of ${t.n} after ${args.get('warmup')} warmup; ` +
        `${plan.slices.length} slice launch(es)), ${tflops(flops, t.median).toFixed(1)} TFLOP/s (${(flops / 1e12).toFixed(3)} TFLOP)`,
    );
    return r.check === undefined ? 0 : validate(p, r.check, o, lse, log);
  } finally {
    device.synchronize();
    for (const b of buffers) b.dispose();
    runner.dispose();
  }
}

/** Compares the device's O (and LSE) with the reference; logs the comparison and `valid: yes|no`. */
function validate(
  p: CheckedFmhaFwdProblem,
  check: FmhaFwdReferenceCheck,
  o: DeviceBuffer,
  lse: DeviceBuffer | undefined,
  log: (line: string) => void,
): number {
  const oBytes = o.copyToHost();
  const oBits = new Uint16Array(oBytes.buffer, oBytes.byteOffset, oBytes.byteLength / 2);
  const lseHost = lse ? new Float32Array(lse.copyToHost().buffer) : undefined;
  const result = compareWithReference(check, (off) => decode(p.dtype, oBits[off]!), lseHost ? (i) => lseHost[i]! : undefined);
  log(result.message);
  log(`valid: ${result.ok ? 'yes' : 'no'}${check.sampled ? ` (${check.rows} sampled query rows)` : ''}`);
  return result.ok ? 0 : 1;
}
