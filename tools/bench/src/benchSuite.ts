// What a benchmark suite gives the harness (runSuite): its cases, how to run and time ours on the
// inputs the harness hands it, and (for operators whose inputs need structure) how to write them.
import type { BaselineMeasurement, OurMeasurement } from './benchResult.ts';
import type { BaselineReply, InputSource, TensorDtype, TensorFile, TimingPlan } from './referenceProtocol.ts';
import type { Precision } from './validate/judgeOutputs.ts';

/** The reference op a case asks the torch server for (tools/bench/REFERENCE_OPS.md). */
export type ReferenceOp =
  | 'permute'
  | 'gemm'
  | 'attention_fwd'
  | 'attention_bwd'
  | 'sparge'
  | 'dsa_indexer_decode'
  | 'dsa_indexer_prefill'
  | 'dsa_sparse_mla_prefill'
  | 'dsa_sparse_mla_decode'
  | 'dsa_decode_step';

/** One case of a suite. */
export interface SuiteCase {
  readonly name: string;
  /** What the record shows about the case (flat). */
  readonly params: Readonly<Record<string, string | number | boolean>>;
  /** The op and params the torch server runs for it (REFERENCE_OPS.md). */
  readonly reference: { readonly op: ReferenceOp; readonly params: Readonly<Record<string, unknown>> };
  /** Seed of the case's inputs (the `normal` generator's, or the suite's own when it writes them). */
  readonly seed: number;
  /** The precision each validated output is judged at (validate/judgeOutputs). */
  readonly precision: Readonly<Record<string, Precision>>;
  /** Baselines whose error sets the tolerance, in preference order: the first that ran is used. */
  readonly errorBaselines: readonly string[];
  /** The timing plan (default DEFAULT_TIMING). */
  readonly timing?: TimingPlan;
}

/** What the harness hands runOurs: the case directory, the inputs as files, the timing plan. */
export interface CaseContext {
  readonly dir: string;
  readonly inputs: Readonly<Record<string, TensorFile>>;
  readonly timing: TimingPlan;
  /** Torch's baselines of the case as prepare measured them (a figure of ours may relate to one: dsa-indexer's HBM read bandwidth). */
  readonly baselines: Readonly<Record<string, BaselineReply>>;
  /** The raw bytes of one input file (its TensorFile's dtype and shape in `inputs`). */
  readInput(name: string): Uint8Array;
  /** Writes a tensor file into the case directory (name.bin) and returns its descriptor. */
  writeTensor(name: string, dtype: TensorDtype, shape: readonly number[], data: ArrayBufferView): TensorFile;
  log(line: string): void;
}

/** What our side of a case produced. */
export interface OurCaseResult {
  readonly ours: OurMeasurement;
  /** Our outputs, named as the op's reference outputs (REFERENCE_OPS.md), written with ctx.writeTensor. */
  readonly outputs: Readonly<Record<string, TensorFile>>;
  /** What the reference of the same computation needs (Sparge: block_map, q_dequant, k_dequant). */
  readonly aux?: Readonly<Record<string, TensorFile>>;
  /** Op-specific check settings (Sparge: pv_mode, pv_threshold, …). */
  readonly checkOptions?: Readonly<Record<string, unknown>>;
  /** References our side measured itself (e.g. our dense kernel beside a sparse one), listed before torch's. */
  readonly baselines?: Readonly<Record<string, BaselineMeasurement>>;
  /**
   * Checks our side made itself beside the server's error check (dsa-indexer: exact top-k index sets
   * against the CPU reference, sampled logits under the kernel's per-element error bound); the case is
   * valid only when every one holds too.
   */
  readonly checks?: Readonly<Record<string, OwnCheck>>;
  readonly note?: string;
}

/** One check our side made (OurCaseResult.checks): whether it held, and what it found. */
export interface OwnCheck {
  readonly ok: boolean;
  readonly detail: string;
}

/** A named benchmark suite; operators register one each (tools/bench/src/suites). */
export interface BenchSuite {
  readonly name: string;
  readonly cases: readonly SuiteCase[];
  /**
   * Writes the case's inputs into `dir` when the suite makes them itself (inputs with structure);
   * without it, the torch server draws `normal` inputs with the case's seed.
   */
  writeInputs?(c: SuiteCase, dir: string): InputSource & { readonly source: 'files' };
  /** Loads the inputs, runs, times (timing/measureLaunches) and writes our outputs for one case. */
  runOurs(c: SuiteCase, ctx: CaseContext): Promise<OurCaseResult>;
  /** Frees whatever the suite holds on the device. */
  dispose?(): void;
}
