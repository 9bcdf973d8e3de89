// example_fmha_bwd: the attention backward the flags describe (CK-tile's tile_example_fmha_bwd
// spelling), through the unified-workspace launcher: prints the selected (dot_do_o, dq_dk_dv,
// convert_dq) triple, the workspace size and its byte layout, compiles the kernels, computes the CPU
// reference (forward O/LSE, then dQ/dK/dV in float64), and on a GPU runs, times and validates.
// Without a CUDA device it says so and exits 0 after the CPU part.
import { describeFmhaBwdWorkspace, FmhaBwdLauncher, type FmhaBwdExecutor } from '@tilekit/fmha';
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
  checkFmhaBwdProblem,
  compareFmhaBwd,
  FMHA_BWD_COMPILE_FLAGS,
  FMHA_BWD_DEFAULT_SM_COUNT,
  FMHA_BWD_TRIPLES,
  fmhaBwdKernelsOf,
  fmhaBwdOperandElements,
  fmhaBwdProblemFlops,
  fmhaBwdReference,
  fmhaBwdTraitsOf,
  FmhaBwdRunner,
  formatFmhaBwdProblem,
  type FmhaBwdProblem,
} from '@tilekit/kernel-fmha-bwd';
import { ATTENTION_FLAG_OF, attentionShapeFromArgs, withAttentionFlags, type AttentionShape } from '@tilekit/example-attention-flags';
import { ArgumentError, TilekitError } from '@tilekit/numeric';
import { compileInstance, Device, NvccCompiler, probe, timeLaunches, type DeviceBuffer } from '@tilekit/runtime';

/** A flag asks for something the backward does not implement (dBias). */
export class FmhaBwdUnsupportedFlagError extends TilekitError {
  readonly flag: string;
  constructor(flag: string, message: string) {
    super('example-fmha-bwd/unsupported', `${flag}: ${message}`);
    this.flag = flag;
  }
}

/** The example's flags: the forward example's (less -lse, -num_splits) plus -deterministic and -dbias. */
export const fmhaBwdParser = withAttentionFlags(
  new ArgParser(
    'example_fmha_bwd',
    'attention backward dQ, dK, dV on sm_90a (dot_do_o + TMA/wgmma dq_dk_dv + convert_dq) with the unified dq_acc workspace',
  ),
  {
    seqlen: '1024',
    seqlenExample: '1,17,259,0',
    headDims: '64, 128, 256 (256: not deterministic)',
    headDimV: '= d',
    inputTensors: 'Q/K/V/dQ/dK/dV',
    outputTensors: 'O/dO',
    precTensors: 'Q, K, V, O, dO and the gradients',
  },
)
  .choice('deterministic', '0', ['0', '1'], '1: dQ reduced over per-split partials in a fixed order (bitwise reproducible); 0: atomic adds')
  .bool('dbias', false, 'also compute dBias (not supported: rejected)')
  .bool('v', true, 'validate dQ, dK, dV against the CPU reference')
  .int('seed', 11939, 'seed of the input fill (uniform in [-1, 1): Q, K, V, dO from seed … seed + 3)')
  .int('warmup', 5, 'untimed runs first', { min: 0 })
  .int('repeat', 20, 'timed runs (median reported)', { min: 1 });

type FmhaBwdFlags = typeof fmhaBwdParser extends ArgParser<infer T> ? T : never;
type FmhaBwdArgs = ParsedArgs<FmhaBwdFlags>;

/** As example_fmha_fwd's: at least one query row (batch mode -s ≥ 1; group mode may list empty sequences, not only those). */
function checkQueryRows(shape: AttentionShape, seqlens: string): void {
  const rows = 'seqlenQ' in shape ? shape.seqlenQ : shape.seqstartQ.at(-1)!;
  if (rows > 0) return;
  throw new ArgParseError(
    '-s',
    `-s=${seqlens}: the problem needs at least one query row (batch mode: -s ≥ 1; group mode may list empty sequences among others, e.g. -mode=1 -s=5,0)`,
  );
}

/** The problem the flags describe. @throws FmhaBwdUnsupportedFlagError for -dbias=1; ArgParseError for flags that make no problem. */
export function problemFromArgs(args: FmhaBwdArgs): FmhaBwdProblem {
  if (args.get('dbias'))
    throw new FmhaBwdUnsupportedFlagError('-dbias', 'dBias is not supported by this backward (no bias instances); run without -dbias');
  const shape = attentionShapeFromArgs(args);
  checkQueryRows(shape, args.get('s'));
  return { ...shape, deterministic: args.get('deterministic') === '1' };
}

/** Above this many forward multiply-adds the example skips the CPU reference (it says so). */
export const FULL_REFERENCE_MAX_MACS = 2 ** 31;

/**
 * Runs the example; `log` receives each output line. Returns the exit code: 0 on success (also
 * without a GPU), 1 when validation fails or no instance runs the problem.
 */
export async function runFmhaBwdExample(args: FmhaBwdArgs, log: (line: string) => void = console.log): Promise<number> {
  let p;
  try {
    p = checkFmhaBwdProblem(problemFromArgs(args));
  } catch (error) {
    if (error instanceof ArgumentError && !(error instanceof ArgParseError)) throw flagErrorOf(args, error, ATTENTION_FLAG_OF);
    throw error;
  }
  const probed = probe();
  const device = probed.driver && probed.deviceCount > 0 ? Device.open(0) : undefined;
  const smCount = device?.smCount ?? FMHA_BWD_DEFAULT_SM_COUNT;
  log(`example_fmha_bwd: ${formatFmhaBwdProblem(p)}, scale ${p.scale}`);
  // The pure launcher (no device work here): selection and the workspace layout.
  const inert: FmhaBwdExecutor<undefined> = { copyToDevice: () => {}, fillZero: () => {}, launch: () => {} };
  const plan = new FmhaBwdLauncher(fmhaBwdTraitsOf(p), { catalog: FMHA_BWD_TRIPLES, executor: inert, smCount, warn: log });
  if (!plan.supported || plan.triple === null || plan.workspace === null) return 1;
  const kernels = fmhaBwdKernelsOf(plan.triple);
  log(
    `instances: ${[kernels.dotDoO, kernels.dqDkDv, kernels.convertDq]
      .filter((x) => x !== null)
      .map((x) => x.name)
      .join(' + ')} (kN0 ${plan.triple.dqDkDv.kN0}, dQ ${plan.triple.dqDkDv.dqAccumulation})`,
  );
  log(
    `workspace: ${plan.workspaceSize.total} bytes = host ${plan.workspaceSize.host} + device ` +
      `${plan.workspaceSize.device}${device ? '' : ` (no device: ${smCount} SMs assumed)`}`,
  );
  log(describeFmhaBwdWorkspace(plan.workspace));
  const compiler = new NvccCompiler();
  const rows: (string | number | boolean)[][] = [];
  for (const instance of [kernels.dotDoO, kernels.dqDkDv, kernels.convertDq]) {
    if (instance === null) continue;
    const compiled = await compileInstance(instance, compiler, FMHA_BWD_COMPILE_FLAGS);
    const r = compiled.resources;
    rows.push([
      instance.name,
      compiled.arch,
      r.registers,
      instance.sharedBytes,
      `${r.spillStores}/${r.spillLoads}`,
      r.stackFrame,
      compiled.cached,
    ]);
  }
  log(formatTable(['kernel', 'arch', 'registers', 'dynamic smem (B)', 'spills st/ld (B)', 'stack (B)', 'cached'], rows));

  const elems = fmhaBwdOperandElements(p);
  const seed = args.get('seed');
  const bits = (n: number, s: number): Uint16Array => {
    const t = fillTensor(HostTensor.empty(p.dtype, [Math.max(1, n)]), 'uf:-1,1', s);
    const b = t.bytes();
    return new Uint16Array(b.buffer, b.byteOffset, Math.max(1, n));
  };
  const data = { q: bits(elems.q, seed), k: bits(elems.k, seed + 1), v: bits(elems.v, seed + 2), dO: bits(elems.dO, seed + 3) };
  const macs = fmhaBwdProblemFlops(p) / 5;
  const validate = args.get('v') && macs <= FULL_REFERENCE_MAX_MACS;
  if (args.get('v') && !validate)
    log(`CPU reference skipped: ${macs.toExponential(2)} forward multiply-adds > 2^31 (use a smaller problem to validate)`);
  const started = performance.now();
  // The forward's O/LSE are needed as inputs even without validation: the reference computes them.
  const ref = fmhaBwdReference(p, data);
  log(
    `CPU reference (fp64; forward O rounded to ${p.dtype}, LSE fp32): ` +
      `${(performance.now() - started).toFixed(1)} ms; tolerance dQ atol ` +
      `${ref.tolerance.dq.atol.toExponential(2)}, dK ${ref.tolerance.dk.atol.toExponential(2)}` +
      `, dV ${ref.tolerance.dv.atol.toExponential(2)}`,
  );

  if (device === undefined) {
    log(
      `no CUDA device found (${probed.reason ?? 'the driver reports no devices'}): the kernels ` +
        `were generated and compiled and the CPU reference computed; nothing ran on a GPU.`,
    );
    return 0;
  }
  const runner = await FmhaBwdRunner.create(p, { device, compiler });
  const buffers: DeviceBuffer[] = [];
  const keep = (b: DeviceBuffer): DeviceBuffer => (buffers.push(b), b);
  try {
    const bufs = {
      q: keep(device.upload(data.q)),
      k: keep(device.upload(data.k)),
      v: keep(device.upload(data.v)),
      o: keep(device.upload(ref.o)),
      dO: keep(device.upload(data.dO)),
      lse: keep(device.upload(ref.lse.length > 0 ? ref.lse : new Float32Array(1))),
      dQ: keep(device.alloc(Math.max(1, elems.dQ) * 2).fill(0xff)),
      dK: keep(device.alloc(Math.max(1, elems.dK) * 2).fill(0xff)),
      dV: keep(device.alloc(Math.max(1, elems.dV) * 2).fill(0xff)),
      ...(p.mode === 'group'
        ? { seqstartQ: keep(device.upload(new Int32Array(p.seqstartQ))), seqstartK: keep(device.upload(new Int32Array(p.seqstartK))) }
        : {}),
    };
    const run = runner.prepare(bufs);
    const t = summarizeTimes(timeLaunches(device, run.launch, { warmup: args.get('warmup'), repeat: args.get('repeat') }));
    const flops = fmhaBwdProblemFlops(p);
    log(
      `${device.name}: ${t.median.toFixed(4)} ms (median of ${t.n} after ${args.get('warmup')} ` +
        `warmup; dot_do_o + dq_dk_dv + convert_dq` +
        `${runner.workspaceLayout.needsZeroDqAcc ? ' + dq_acc memset' : ''}), ` +
        `${tflops(flops, t.median).toFixed(1)} TFLOP/s (${(flops / 1e12).toFixed(3)} TFLOP = 2.5 ` +
        `× forward)`,
    );
    if (!validate) return 0;
    const host = (b: DeviceBuffer): Uint16Array => {
      const x = b.copyToHost();
      return new Uint16Array(x.buffer, x.byteOffset, x.byteLength / 2);
    };
    const results = compareFmhaBwd(p, ref, { dQ: host(bufs.dQ), dK: host(bufs.dK), dV: host(bufs.dV) });
    for (const r of results)
      log(
        `${r.tensor}: ${r.checked} values, max |err| ${r.maxAbsErr.toExponential(2)}, ${r.wrong} outside${r.first ? `; first: ${r.first}` : ''}`,
      );
    const ok = results.every((r) => r.wrong === 0);
    log(`valid: ${ok ? 'yes' : 'no'}`);
    return ok ? 0 : 1;
  } finally {
    device.synchronize();
    for (const b of buffers) b.dispose();
    runner.dispose();
  }
}
