// example_dsa: generates the kernels of the whole DSA path a problem needs (the lightning indexer, the exact top-k, the
// sparse MLA attention: decode over the FP8 cache with its split combine, or prefill over a bf16 latent KV), compiles
// them and prints their resources; on a GPU runs the path as one step, validates every stage against the CPU references
// (-v=1) and times it; without a CUDA device it computes the CPU reference of the whole path (-v=1), says so and exits 0.
import { dsaResourcesTable } from '@tilekit/example-dsa-indexer';
import { ArgParseError, flagErrorOf, Prng } from '@tilekit/host';
import {
  checkDsaDecodeStepConfig,
  checkDsaPrefillStepConfig,
  DSA_SPARSE_MLA_COMBINE,
  DSA_SPARSE_MLA_DECODE_FINAL,
  DSA_SPARSE_MLA_DECODE_PARTIAL,
  DSA_SPARSE_MLA_PREFILL_CATALOG,
  DSA_SPARSE_MLA_SM_SCALE,
  dsaIndexerDecodeInstanceFor,
  dsaIndexerDecodeReferenceWithBound,
  dsaIndexerPrefillInstanceFor,
  dsaIndexerPrefillReferenceWithBound,
  dsaMlaCacheRowReader,
  dsaRandomDecodeStepInput,
  dsaRandomPrefillStepInput,
  dsaSparseMlaDecodeReference,
  dsaSparseMlaDecodeSplit,
  dsaSparseMlaPrefillReference,
  dsaTopkInstanceForLaunch,
  dsaTopkReference,
  dsaTopkToPageTable,
} from '@tilekit/kernel-dsa';
import { ArgumentError } from '@tilekit/numeric';
import { NvccCompiler, probe, type CompilableInstance } from '@tilekit/runtime';
import { runDsaOnGpu, type DsaExampleInputs, type DsaStepConfig } from './dsaGpuRun.ts';
import { DSA_FLAG_OF, problemFromArgs, type DsaArgs, type DsaExampleProblem } from './dsaFlags.ts';

/** SMs the split is planned for without a GPU (H100 and H200 both have 132). */
const HOPPER_SMS = 132;

/** The checked step config of a problem. */
function stepConfig(p: DsaExampleProblem): DsaStepConfig {
  const common = { indexHeads: p.indexHeads, hQ: p.hQ, topk: p.topk, smScale: DSA_SPARSE_MLA_SM_SCALE, hasSink: p.sink };
  if (p.mode === 'prefill') return { mode: 'prefill', c: checkDsaPrefillStepConfig({ ...common, seqQ: p.nextN, seqKv: p.context }) };
  const maxPages = Math.ceil(p.context / 64);
  const c = checkDsaDecodeStepConfig({
    ...common,
    batch: p.batch,
    nextN: p.nextN,
    maxContext: p.context,
    maxPages,
    numPages: p.batch * maxPages + 1,
  });
  return { mode: 'decode', c };
}

/** The instances a step runs, in launch order (the decode's split planned for `smCount` SMs). */
function instancesOf(s: DsaStepConfig, p: DsaExampleProblem, smCount: number): CompilableInstance[] {
  const topk = dsaTopkInstanceForLaunch(s.c.topkConfig, 0n);
  if (s.mode === 'prefill') return [dsaIndexerPrefillInstanceFor(p.indexHeads), topk, DSA_SPARSE_MLA_PREFILL_CATALOG[0]!];
  const split = dsaSparseMlaDecodeSplit(s.c.attention, smCount, p.splits);
  const attention = split.splits === 1 ? [DSA_SPARSE_MLA_DECODE_FINAL] : [DSA_SPARSE_MLA_DECODE_PARTIAL, DSA_SPARSE_MLA_COMBINE];
  return [dsaIndexerDecodeInstanceFor(p.indexHeads, p.nextN), topk, ...attention];
}

function describe(p: DsaExampleProblem): string {
  const what =
    p.mode === 'decode'
      ? `decode: ${p.batch} sequences × next_n ${p.nextN}, context ${p.context} tokens (paged: index-key cache and FP8 MLA cache)`
      : `prefill: ${p.nextN} queries over ${p.context} keys, causal windows ending at ${p.context} (bf16 latent KV)`;
  return `example_dsa: ${what}; indexer ${p.indexHeads} heads, top-${p.topk}, MLA ${p.hQ} heads × 576 / 512${p.sink ? ', sinks' : ''}`;
}

/** The seeded inputs of the whole path. */
function makeInputs(p: DsaExampleProblem, seed: number): DsaExampleInputs {
  const rng = new Prng(seed);
  const common = { indexHeads: p.indexHeads, hQ: p.hQ, topk: p.topk, sink: p.sink };
  if (p.mode === 'prefill') return { mode: 'prefill', x: dsaRandomPrefillStepInput({ ...common, seqQ: p.nextN, seqKv: p.context }, rng) };
  const o = { ...common, B: p.batch, nextN: p.nextN, maxContext: p.context, minContext: p.context };
  return { mode: 'decode', x: dsaRandomDecodeStepInput(o, rng) };
}

/** The whole path on the CPU (indexer reference → exact top-k of its logits → attention reference); a summary line. */
function cpuReference(inputs: DsaExampleInputs): string {
  const started = performance.now();
  let logits: Float32Array;
  let selected: Int32Array;
  let out: Float32Array;
  if (inputs.mode === 'decode') {
    const { x } = inputs;
    const input = x.index.input;
    const rows = input.B * input.nextN;
    logits = dsaIndexerDecodeReferenceWithBound(input).logits;
    const positions = dsaTopkReference({ logits, rows, rowStride: input.maxContext, k: x.topk });
    selected = dsaTopkToPageTable(positions, rows, x.topk, input.blockTable, input.maxPages, input.nextN);
    const sink = x.attnSink === undefined ? {} : { attnSink: x.attnSink };
    const mla = { q: x.q, indices: selected, b: input.B, sQ: input.nextN, hQ: x.hQ, topk: x.topk, smScale: x.smScale, ...sink };
    out = dsaSparseMlaDecodeReference({ ...mla, readRow: dsaMlaCacheRowReader(x.mlaCache) }).out;
  } else {
    const { x } = inputs;
    logits = dsaIndexerPrefillReferenceWithBound(x.index).logits;
    selected = dsaTopkReference({ logits, rows: x.index.S, rowStride: x.index.Skv, k: x.topk });
    const sink = x.attnSink === undefined ? {} : { attnSink: x.attnSink };
    const mla = { q: x.q, kv: x.kv, indices: selected, sQ: x.index.S, sKv: x.index.Skv, hQ: x.hQ, topk: x.topk, smScale: x.smScale };
    out = dsaSparseMlaPrefillReference({ ...mla, ...sink }).out;
  }
  const kept = selected.reduce((n, s) => n + (s >= 0 ? 1 : 0), 0);
  const ms = (performance.now() - started).toFixed(0);
  return `CPU reference of the whole path: ${logits.length} logits, ${kept} of ${selected.length} top-k entries selected, ${out.length} outputs in ${ms} ms`;
}

/** The problem and its step config, with a bad value reported as the one-line error of its flag. */
function planOf(args: DsaArgs): { readonly problem: DsaExampleProblem; readonly step: DsaStepConfig } {
  try {
    const problem = problemFromArgs(args);
    const step = stepConfig(problem);
    instancesOf(step, problem, HOPPER_SMS);
    return { problem, step };
  } catch (error) {
    if (error instanceof ArgumentError && !(error instanceof ArgParseError)) throw flagErrorOf(args, error, DSA_FLAG_OF);
    throw error;
  }
}

/**
 * Runs the example; `log` receives each output line. Returns the exit code: 0 on success (also without a GPU), 1 when
 * validation fails. Flags that make no valid problem throw ArgParseError (exit 2).
 */
export async function runDsaExample(args: DsaArgs, log: (line: string) => void = console.log): Promise<number> {
  const { problem, step } = planOf(args);
  const compiler = new NvccCompiler();
  const probed = probe();
  const gpu = probed.driver && probed.deviceCount > 0;
  log(describe(problem));
  log(await dsaResourcesTable(instancesOf(step, problem, HOPPER_SMS), compiler));
  if (!gpu && step.mode === 'decode') log(`(the decode's split is planned for ${HOPPER_SMS} SMs, an H100's or H200's)`);
  const inputs = makeInputs(problem, args.get('seed'));
  // On a GPU the stage checks compute the references themselves (each fed the GPU's previous stage); without one, -v=1
  // runs the whole path on the CPU.
  if (args.get('v') && !gpu) log(cpuReference(inputs));
  if (!gpu) {
    log(
      `no CUDA device found (${probed.reason ?? 'the driver reports no devices'}): the kernels were generated and compiled` +
        `${args.get('v') ? ' and the CPU reference computed' : ''}; nothing ran on a GPU.`,
    );
    return 0;
  }
  const options = { validate: args.get('v'), compiler, warmup: args.get('warmup'), repeat: args.get('repeat'), splits: problem.splits };
  return runDsaOnGpu(step, inputs, options, log);
}
