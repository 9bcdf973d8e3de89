// example_fmha_fwd: plans the attention forward the flags describe (the dispatched instance, and
// with split-KV the combine instance), compiles the kernel(s), prints the instance(s) and their
// resources, computes the CPU reference (-v=1: fp32-or-better, probabilities not narrowed; sampled
// query rows for big problems), and on a GPU runs, times and validates. Without a CUDA device it
// says so and exits 0 after the CPU part.
import {
  attentionFwdToleranceFor,
  makeGenericAttentionMask,
  referenceAttentionFwd,
  resolveAttentionFwdArgs,
  attentionLseIndex,
  valueTable16,
  attentionScoreAt,
  attentionScoreSetup,
  type AttentionFwdArgs,
  type AttentionScoreModifier,
  type AttentionScoreSetup,
  type FmhaScoreModifierKind,
} from '@tilekit/fmha';
import {
  ArgParseError,
  ArgParser,
  fillTensor,
  flagErrorOf,
  formatTable,
  HostTensor,
  Prng,
  summarizeTimes,
  tflops,
  type ParsedArgs,
} from '@tilekit/host';
import {
  checkFmhaFwdProblem,
  FMHA_FWD_COMPILE_FLAGS,
  FMHA_FWD_DEFAULT_SM_COUNT,
  fmhaFwdOperandElements,
  fmhaFwdProblemFlops,
  fmhaFwdReferenceArgs,
  FmhaFwdRunner,
  formatFmhaFwdProblem,
  NoFmhaFwdInstanceError,
  planFmhaFwd,
  type CheckedFmhaFwdProblem,
  type FmhaFwdPlan,
  type FmhaFwdProblem,
} from '@tilekit/kernel-fmha-fwd';
import { ATTENTION_FLAG_OF, attentionShapeFromArgs, withAttentionFlags, type AttentionShape } from '@tilekit/example-attention-flags';
import { ArgumentError, decode } from '@tilekit/numeric';
import { compileInstance, Device, NvccCompiler, probe, timeLaunches, type DeviceBuffer } from '@tilekit/runtime';

/** The example's flags (CK-tile's tile_example_fmha_fwd spelling: `-key=value`, `-?` for help). */
export const fmhaFwdParser = withAttentionFlags(
  new ArgParser(
    'example_fmha_fwd',
    'attention forward O = softmax(scale·Q·Kᵀ + mask)·V on sm_90a (TMA + wgmma, warp specialized), optional split-KV + combine',
  ),
  {
    seqlen: '3328',
    seqlenExample: '1,17,259,4097',
    headDims: '32, 64, 96, 128, 192, 256',
    headDimV: '= d; 128 with d = 192',
    inputTensors: 'Q/K/V',
    outputTensors: 'O',
    precTensors: 'Q, K, V and O',
  },
)
  .bool('lse', false, 'also write LSE (fp32, natural log)')
  .int('num_splits', 1, 'key splits of split-KV (1: none; 0: the heuristic picks them for the GPU)', { min: 0 })
  .float('softcap', 0, 'logit soft-capping: scores become cap·tanh(s/cap) (Gemma 2); 0: off', { min: 0 })
  .bool('alibi', false, "ALiBi: scores get −slope_h·|i + s_k − s − j| with the paper's geometric slopes 2^(−8(h+1)/h)")
  .bool('v', true, 'validate against the CPU reference (sampled query rows for big problems)')
  .int('seed', 11939, 'seed of the input fill (uniform in [-1, 1): Q from seed, K from seed + 1, V from seed + 2)')
  .int('warmup', 5, 'untimed runs first', { min: 0 })
  .int('repeat', 20, 'timed runs (median reported)', { min: 1 });

type FmhaFwdFlags = typeof fmhaFwdParser extends ArgParser<infer T> ? T : never;
type FmhaFwdArgs = ParsedArgs<FmhaFwdFlags>;

/**
 * The rule for `-s`: the problem needs at least one query row — batch mode `-s ≥ 1`; group mode
 * may list empty sequences (`-s=1,0`) but not only those. An empty problem would compile and launch
 * nothing, so it is an error rather than a silent no-op.
 */
function checkQueryRows(shape: AttentionShape, seqlens: string): void {
  const rows = 'seqlenQ' in shape ? shape.seqlenQ : shape.seqstartQ.at(-1)!;
  if (rows > 0) return;
  throw new ArgParseError(
    '-s',
    `-s=${seqlens}: the problem needs at least one query row (batch mode: -s ≥ 1; group mode may list empty sequences among others, e.g. -mode=1 -s=5,0)`,
  );
}

/** The problem the flags describe (throws ArgParseError for flags that cannot make one). */
export function problemFromArgs(args: FmhaFwdArgs): FmhaFwdProblem {
  const splits = args.get('num_splits');
  const shape = attentionShapeFromArgs(args);
  checkQueryRows(shape, args.get('s'));
  const score = scoreModifierOf(args);
  return { ...shape, lse: args.get('lse'), splitKv: splits === 0 ? 'auto' : splits, ...(score ? { scoreModifier: score } : {}) };
}

/** The score modifier the flags ask for (`-softcap=<cap>` or `-alibi=1`, not both). */
function scoreModifierOf(args: FmhaFwdArgs): FmhaScoreModifierKind | undefined {
  const softcap = args.get('softcap') > 0;
  if (softcap && args.get('alibi'))
    throw new ArgParseError('-alibi', `-alibi=1 with -softcap=${args.get('softcap')}: the kernels apply one score modifier at a time`);
  return softcap ? 'softcap' : args.get('alibi') ? 'alibi' : undefined;
}

/** The setup of the problem's modifier: the reference's spec, the kernel values, ALiBi's slopes. */
function scoreSetupOf(p: CheckedFmhaFwdProblem, args: FmhaFwdArgs): AttentionScoreSetup | undefined {
  return attentionScoreSetup(p.scoreModifier, p.nheadQ, args.get('softcap'));
}

// The problem field an ArgumentError names -> the flag it came from.
const FLAG_OF: Readonly<Record<string, keyof FmhaFwdFlags>> = {
  ...ATTENTION_FLAG_OF,
  'problem.splitKv': 'num_splits',
  'problem.scoreModifier': 'softcap',
};

/** Above this many multiply-adds (Σ sq·sk·h·(d + d_v)) the CPU reference checks sampled query rows. */
export const FULL_REFERENCE_MAX_MACS = 2 ** 30;
/** Query rows checked per (batch, head) when sampling (the first and last included). */
export const SAMPLED_ROWS_PER_HEAD = 4;

/** Expected O values at some element offsets and LSE values at some LSE indices, with the tolerance. */
export interface FmhaFwdReferenceCheck {
  readonly oOffsets: Float64Array;
  readonly oWant: Float64Array;
  readonly lseIndices: Float64Array;
  readonly lseWant: Float64Array;
  readonly sampled: boolean;
  readonly rows: number;
  readonly tolerance: ReturnType<typeof attentionFwdToleranceFor>;
}

/**
 * The CPU reference of `p`: `referenceAttentionFwd` over the whole problem, or, with `sample`, the
 * same formula (float64, exact exponentials, P not narrowed) for `sample` rows per (batch, head):
 * the first, the last and random ones. Tolerance: `attentionFwdToleranceFor`.
 */
export function fmhaFwdReferenceCheck(
  p: CheckedFmhaFwdProblem,
  data: { q: Uint16Array; k: Uint16Array; v: Uint16Array },
  options: { readonly sample?: number; readonly seed?: number; readonly scoreModifier?: AttentionScoreModifier } = {},
): FmhaFwdReferenceCheck {
  const score = options.scoreModifier;
  const args: AttentionFwdArgs = { ...fmhaFwdReferenceArgs(p, data), ...(score ? { scoreModifier: score } : {}) };
  const a = resolveAttentionFwdArgs(args);
  const tolerance = attentionFwdToleranceFor(args);
  const oOffsets: number[] = [];
  const oWant: number[] = [];
  const lseIndices: number[] = [];
  const lseWant: number[] = [];
  const offsetOf = (s: { batch: number; head: number; row: number }, starts: readonly number[], b: number, h: number, r: number): number =>
    a.groupMode ? (starts[b]! + r) * s.row + h * s.head : b * s.batch + h * s.head + r * s.row;
  let rows = 0;
  if (options.sample === undefined) {
    const ref = referenceAttentionFwd(args);
    for (let b = 0; b < p.batch; b++) {
      for (let h = 0; h < p.nheadQ; h++) {
        for (let r = 0; r < a.seqlensQ[b]!; r++, rows++) {
          const base = offsetOf(p.oStrides, a.rowStartsQ, b, h, r);
          for (let j = 0; j < p.hdimV; j++) {
            oOffsets.push(base + j);
            oWant.push(ref.o[base + j]!);
          }
          const li = attentionLseIndex(a, b, h, r);
          lseIndices.push(li);
          lseWant.push(ref.lse[li]!);
        }
      }
    }
  } else {
    const prng = new Prng(options.seed ?? 0);
    const table = valueTable16(p.dtype);
    const ratio = p.nheadQ / p.nheadK;
    for (let b = 0; b < p.batch; b++) {
      const sq = a.seqlensQ[b]!;
      const sk = a.seqlensK[b]!;
      if (sq === 0) continue;
      const mask = makeGenericAttentionMask(p.mask, sq, sk);
      const s = new Float64Array(sk);
      for (let h = 0; h < p.nheadQ; h++) {
        const hk = Math.floor(h / ratio);
        const at = attentionScoreAt(score, h, sq, sk);
        const picked = new Set([0, sq - 1]);
        while (picked.size < Math.min(options.sample, sq)) picked.add(prng.nextInt(0, sq - 1));
        for (const r of [...picked].sort((x, y) => x - y)) {
          rows++;
          const [lo, hi] = mask.keyRangeOfRow(r);
          const qo = offsetOf(p.qStrides, a.rowStartsQ, b, h, r);
          let m = -Infinity;
          for (let j = lo; j < hi; j++) {
            const ko = offsetOf(p.kStrides, a.rowStartsK, b, hk, j);
            let dot = 0;
            for (let x = 0; x < p.hdimQ; x++) dot += table[data.q[qo + x]!]! * table[data.k[ko + x]!]!;
            s[j] = at.logit(dot * p.scale, r, j);
            m = Math.max(m, s[j]!);
          }
          let sum = 0;
          for (let j = lo; j < hi; j++) sum += s[j] = Math.exp(s[j]! - m);
          const base = offsetOf(p.oStrides, a.rowStartsQ, b, h, r);
          for (let x = 0; x < p.hdimV; x++) {
            let acc = 0;
            for (let j = lo; j < hi; j++) acc += s[j]! * table[data.v[offsetOf(p.vStrides, a.rowStartsK, b, hk, j) + x]!]!;
            oOffsets.push(base + x);
            oWant.push(sum > 0 ? Math.fround(acc / sum) : 0);
          }
          lseIndices.push(attentionLseIndex(a, b, h, r));
          lseWant.push(sum > 0 ? Math.fround(m + Math.log(sum)) : -Infinity);
        }
      }
    }
  }
  return {
    oOffsets: Float64Array.from(oOffsets),
    oWant: Float64Array.from(oWant),
    lseIndices: Float64Array.from(lseIndices),
    lseWant: Float64Array.from(lseWant),
    sampled: options.sample !== undefined,
    rows,
    tolerance,
  };
}

/** Compares kernel output with a reference check: counts, worst errors and the first failure. */
export function compareWithReference(
  check: FmhaFwdReferenceCheck,
  o: (offset: number) => number,
  lse: ((index: number) => number) | undefined,
): { readonly ok: boolean; readonly message: string } {
  const { o: to, lse: tl } = check.tolerance;
  let bad = 0;
  let worst = 0;
  let first = '';
  check.oOffsets.forEach((off, i) => {
    const want = check.oWant[i]!;
    const got = o(off);
    const err = Math.abs(got - want);
    worst = Math.max(worst, Number.isNaN(err) ? Infinity : err);
    if (!(err <= to.atol + to.rtol * Math.abs(want))) {
      bad++;
      first ||= `O[${off}] = ${got}, reference ${want}`;
    }
  });
  let worstL = 0;
  if (lse !== undefined) {
    check.lseIndices.forEach((li, i) => {
      const want = check.lseWant[i]!;
      const got = lse(li);
      const ok = want === -Infinity ? got === -Infinity : Math.abs(got - want) <= tl.atol + tl.rtol * Math.abs(want);
      if (want !== -Infinity) worstL = Math.max(worstL, Math.abs(got - want));
      if (!ok) {
        bad++;
        first ||= `LSE[${li}] = ${got}, reference ${want}`;
      }
    });
  }
  const checked = `${check.oOffsets.length} O${lse ? ` + ${check.lseIndices.length} LSE` : ''} values`;
  const message = `${checked}: max |err| O ${worst.toExponential(2)} (atol ${to.atol.toExponential(2)}, rtol ${to.rtol.toExponential(2)})${lse ? `, LSE ${worstL.toExponential(2)}` : ''}; ${bad} outside${first ? `; first: ${first}` : ''}`;
  return { ok: bad === 0, message };
}

function log2(x: number): string {
  return `2^${Math.log2(Math.max(x, 1)).toFixed(1)}`;
}

/**
 * Runs the example; `log` receives each output line. Returns the exit code: 0 on success (also
 * without a GPU), 1 when validation fails or no instance runs the problem.
 */
export async function runFmhaFwdExample(args: FmhaFwdArgs, log: (line: string) => void = console.log): Promise<number> {
  const probed = probe();
  const hasGpu = probed.driver && probed.deviceCount > 0;
  const device = hasGpu ? Device.open(0) : undefined;
  let plan: FmhaFwdPlan;
  try {
    plan = planFmhaFwd(checkFmhaFwdProblem(problemFromArgs(args)), { smCount: device?.smCount ?? FMHA_FWD_DEFAULT_SM_COUNT });
  } catch (error) {
    if (error instanceof NoFmhaFwdInstanceError) {
      log(error.message);
      return 1;
    }
    if (error instanceof ArgumentError && !(error instanceof ArgParseError)) throw flagErrorOf(args, error, FLAG_OF);
    throw error;
  }
  const p = plan.problem;
  const scoreSetup = scoreSetupOf(p, args);
  const scoreLine = scoreSetup?.reference.kind === 'softcap' ? `, soft-capping ${args.get('softcap')}` : scoreSetup ? ', ALiBi' : '';
  log(`example_fmha_fwd: ${formatFmhaFwdProblem(p)}, scale ${p.scale}${scoreLine}`);
  if (args.get('num_splits') === 0)
    log(
      `split-KV heuristic: ${p.numSplits} split(s) for ${device?.smCount ?? FMHA_FWD_DEFAULT_SM_COUNT} SMs${device ? '' : ' (no device: an H200 assumed)'}`,
    );
  const main = plan.instance;
  const mainLaunch = main.launch(p.batch, p.nheadQ, p.seqlenQ, p.numSplits);
  log(
    `instance: ${main.name} (key ${main.key.hash}), tile ${main.policy.tileM}x` +
      `${main.policy.tileN}, ${main.policy.stages} stages, ${main.threads} threads; grid [` +
      `${mainLaunch.grid.join(', ')}], ${main.sharedBytes} B dynamic smem`,
  );
  if (plan.combine) {
    const c = plan.combine;
    const cl = c.launch(p.batch, p.nheadQ, p.seqlenQ);
    log(
      `combine:  ${c.name} (key ${c.key.hash}), ${c.policy.tileM} rows per block, ${c.threads} ` +
        `threads; grid [${cl.grid.join(', ')}]; workspace ${plan.workspaceBytes} B`,
    );
  }
  const compiler = new NvccCompiler();
  const rows: (string | number | boolean)[][] = [];
  for (const instance of plan.combine ? [main, plan.combine] : [main]) {
    const compiled = await compileInstance(instance, compiler, FMHA_FWD_COMPILE_FLAGS);
    const r = compiled.resources;
    rows.push([
      instance.name,
      compiled.arch,
      r.registers,
      r.sharedBytes,
      instance.sharedBytes,
      `${r.spillStores}/${r.spillLoads}`,
      r.stackFrame,
      compiled.cached,
    ]);
  }
  log(formatTable(['kernel', 'arch', 'registers', 'static smem (B)', 'dynamic smem (B)', 'spills st/ld (B)', 'stack (B)', 'cached'], rows));

  const elems = fmhaFwdOperandElements(p);
  const seed = args.get('seed');
  const bits = (n: number, s: number): Uint16Array => {
    const t = fillTensor(HostTensor.empty(p.dtype, [Math.max(1, n)]), 'uf:-1,1', s);
    const b = t.bytes();
    return new Uint16Array(b.buffer, b.byteOffset, Math.max(1, n));
  };
  const data = { q: bits(elems.q, seed), k: bits(elems.k, seed + 1), v: bits(elems.v, seed + 2) };
  let check: FmhaFwdReferenceCheck | undefined;
  if (args.get('v')) {
    const macs = fmhaFwdProblemFlops(p) / 2;
    const full = macs <= FULL_REFERENCE_MAX_MACS;
    const started = performance.now();
    const reference = scoreSetup ? { scoreModifier: scoreSetup.reference } : {};
    check = fmhaFwdReferenceCheck(p, data, full ? reference : { sample: SAMPLED_ROWS_PER_HEAD, seed, ...reference });
    const ms = (performance.now() - started).toFixed(1);
    const tol = `O atol ${check.tolerance.o.atol.toExponential(2)} + rtol ${check.tolerance.o.rtol.toExponential(2)}`;
    if (full) log(`CPU reference (fp64, probabilities not narrowed): all ${check.rows} query rows in ${ms} ms (${tol})`);
    else
      log(
        `CPU reference (fp64, probabilities not narrowed): SAMPLED ${check.rows} query rows (` +
          `${SAMPLED_ROWS_PER_HEAD} per batch and head incl. the first and last; ${log2(macs)} > ` +
          `2^30 multiply-adds) in ${ms} ms (${tol})`,
      );
  }

  if (device === undefined) {
    log(
      `no CUDA device found (${probed.reason ?? 'the driver reports no devices'}): the ` +
        `kernel(s) were generated and compiled${check ? ' and the CPU reference computed' : ''}; ` +
        `nothing ran on a GPU.`,
    );
    return 0;
  }
  const runner = await FmhaFwdRunner.create(p, { device, compiler });
  const buffers: DeviceBuffer[] = [];
  const keep = (b: DeviceBuffer): DeviceBuffer => (buffers.push(b), b);
  try {
    const q = keep(device.upload(data.q));
    const k = keep(device.upload(data.k));
    const v = keep(device.upload(data.v));
    const o = keep(device.alloc(Math.max(1, elems.o) * 2).fill(0xff));
    const lse = p.lse ? keep(device.alloc(Math.max(1, elems.lse) * 4).fill(0xff)) : undefined;
    const group =
      p.mode === 'group'
        ? { seqstartQ: keep(device.upload(new Int32Array(p.seqstartQ))), seqstartK: keep(device.upload(new Int32Array(p.seqstartK))) }
        : {};
    const slopes = scoreSetup?.slopes ? keep(device.upload(scoreSetup.slopes)) : undefined;
    const score = scoreSetup ? { scoreModifier: scoreSetup.kernel(slopes?.ptr) } : {};
    const run = runner.prepare({ q, k, v, o, ...(lse ? { lse } : {}), ...group, ...score }); // validated once, before any launch
    const t = summarizeTimes(timeLaunches(device, run.launch, { warmup: args.get('warmup'), repeat: args.get('repeat') }));
    const flops = fmhaFwdProblemFlops(p);
    log(
      `${device.name}: ${t.median.toFixed(4)} ms (median of ${t.n} after ${args.get('warmup')} ` +
        `warmup${runner.combineKernel ? '; attention + combine' : ''}), ` +
        `${tflops(flops, t.median).toFixed(1)} TFLOP/s (${(flops / 1e12).toFixed(3)} TFLOP)`,
    );
    if (check === undefined) return 0;
    const oBytes = o.copyToHost();
    const oBits = new Uint16Array(oBytes.buffer, oBytes.byteOffset, Math.max(1, elems.o));
    const lseHost = lse ? new Float32Array(lse.copyToHost().buffer) : undefined;
    const result = compareWithReference(check, (off) => decode(p.dtype, oBits[off]!), lseHost ? (i) => lseHost[i]! : undefined);
    log(result.message);
    log(`valid: ${result.ok ? 'yes' : 'no'}${check.sampled ? ` (${check.rows} sampled query rows)` : ''}`);
    return result.ok ? 0 : 1;
  } finally {
    device.synchronize();
    for (const b of buffers) b.dispose();
    runner.dispose();
  }
}
