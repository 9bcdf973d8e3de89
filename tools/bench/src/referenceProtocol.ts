// The contract between the bench harness (node, our kernels) and the torch reference server
// (tools/bench/python/torch_reference.py --serve) on the GPU machine. One python process serves a
// whole suite over JSON lines: node writes one request per line on its stdin, python answers each
// with exactly one line on stdout that starts with REPLY_MARKER (anything else python prints is a
// log line). Per case:
//
//   1. prepare: python makes the case's inputs (or reads the ones node wrote), computes the fp32
//      reference outputs (kept in GPU memory until check), times every torch baseline with the
//      TIMING plan below and measures each baseline's error against the fp32 reference.
//   2. node loads the same inputs from the files, runs and times ours, writes our outputs to files.
//   3. check: python measures our outputs' error against the fp32 reference (sparse operators: the
//      reference of the same sparse computation, built from the aux tensors node sends, e.g. our
//      block map) and frees the case.
//   4. node judges the errors (validate/) and records the case.
//
// Tensor files are raw little-endian arrays in the named dtype, C-contiguous in `shape`.

/** The first characters of every reply line python writes on stdout. */
export const REPLY_MARKER = '@@tilekit-reference ';

/** Element types of tensor files. */
export type TensorDtype = 'fp16' | 'bf16' | 'fp32' | 'int8' | 'uint8' | 'int32';

/** One tensor in a file of the case directory. */
export interface TensorFile {
  /** File name relative to the case directory. */
  readonly file: string;
  readonly dtype: TensorDtype;
  readonly shape: readonly number[];
}

/**
 * Where a case's inputs come from. `normal`: python draws every input with
 * `torch.randn(shape, dtype=float32, generator=cuda generator seeded with seed)` rounded to the
 * dtype (full entropy), in the order the op documents, and writes them. `files`: node wrote them
 * (operators whose inputs need structure, e.g. Sparge's locality inputs) and python reads them.
 */
export type InputSource =
  | { readonly source: 'normal'; readonly seed: number }
  | { readonly source: 'files'; readonly generator: string; readonly seed: number; readonly tensors: Readonly<Record<string, TensorFile>> };

/**
 * How both sides time a callable (ours: @tilekit/runtime's timeBackToBack; torch: the same scheme
 * in python): `warmup` untimed calls; one calibration call (t) sets launchesPerRep = clamp(ceil(targetMs
 * / t), minLaunches, maxLaunches) and ceil(warmupMs / t) more untimed calls (≤ maxLaunches) bring the
 * clocks up from idle; then `repetitions` independent repetitions of launchesPerRep calls back to back
 * between two CUDA events, each divided by launchesPerRep. A timing whose (max − min) / median
 * exceeds 5% is repeated up to twice and the tightest kept. With flushL2 every call is preceded by a
 * write of FLUSH_BYTES to a scratch buffer, and the same number of flushes alone is timed and subtracted.
 */
export interface TimingPlan {
  readonly warmup: number;
  /** GPU time of untimed calls after the calibration, so both sides start at speed (not from idle clocks). */
  readonly warmupMs: number;
  readonly repetitions: number;
  readonly targetMs: number;
  readonly minLaunches: number;
  readonly maxLaunches: number;
  readonly flushL2: boolean;
}

/** Bytes written to flush the L2 cache (H100/H200 L2 is 50 MiB). */
export const FLUSH_BYTES = 256 << 20;

/** Default plan: 3 warm-ups and 250 ms of warm-up, 5 repetitions of ≥ 20 ms each (10..2000 launches). */
export const DEFAULT_TIMING: TimingPlan = {
  warmup: 3,
  warmupMs: 250,
  repetitions: 5,
  targetMs: 20,
  minLaunches: 10,
  maxLaunches: 2000,
  flushL2: false,
};

/** A case whose median is below this is also timed with the L2 flushed (docs/benchmarks.md). */
export const SHORT_CASE_MS = 0.1;

/** A timing: per-launch milliseconds of each repetition, and their median, min and max. */
export interface TimingStats {
  readonly ms: number;
  readonly msMin: number;
  readonly msMax: number;
  readonly reps: readonly number[];
  readonly launchesPerRep: number;
}

/**
 * Error of an output against the fp32 reference: max |got − want| and sqrt(mean((got − want)²)); NaN
 * anywhere makes both Infinity (python writes it as 1e999, which JSON.parse reads as Infinity).
 */
export interface ErrorStats {
  readonly maxAbs: number;
  readonly rms: number;
}

/** Size of the fp32 reference output: max |want| and sqrt(mean(want²)). */
export interface ReferenceStats {
  readonly maxAbs: number;
  readonly rms: number;
}

export interface HelloRequest {
  readonly cmd: 'hello';
}

export interface HelloReply {
  readonly ok: true;
  readonly provenance: Provenance;
}

/** Machine and library provenance, recorded in every result. */
export interface Provenance {
  readonly device: string;
  readonly torch: string;
  readonly cuda: string;
  readonly cudnn: string;
  readonly driver: string;
  /** nvidia-smi: current and maximum SM clock (MHz), power limit (W). */
  readonly smClockMHz: number;
  readonly smClockMaxMHz: number;
  readonly powerLimitW: number;
}

export interface PrepareRequest {
  readonly cmd: 'prepare';
  readonly case: string;
  /** The torch op (python's RUNNERS key) and its params, as the suite case defines them. */
  readonly op: string;
  readonly params: Readonly<Record<string, unknown>>;
  /** The case directory (exists; node deletes it after check). */
  readonly dir: string;
  readonly inputs: InputSource;
  readonly timing: TimingPlan;
}

/** A baseline that ran: its timing (also with the L2 flushed for short cases), figure of merit and errors per output. */
export interface BaselineRun extends TimingStats {
  readonly tflops?: number;
  readonly gbps?: number;
  readonly flushed?: TimingStats;
  readonly errors: Readonly<Record<string, ErrorStats>>;
  /** How the baseline was called when not the plain form (e.g. "nested jagged tensors", "looped over sequences"). */
  readonly form?: string;
}

export type BaselineReply = BaselineRun | { readonly error: string };

export interface PrepareReply {
  readonly ok: true;
  /** The inputs as files in the case directory (for `normal`, the ones python wrote), and the generator's description. */
  readonly inputs: { readonly generator: string; readonly seed: number; readonly tensors: Readonly<Record<string, TensorFile>> };
  readonly baselines: Readonly<Record<string, BaselineReply>>;
  /** The fp32 reference of each output the op validates. */
  readonly reference: Readonly<Record<string, ReferenceStats>>;
}

export interface CheckRequest {
  readonly cmd: 'check';
  readonly case: string;
  /** Our outputs, by the names of PrepareReply.reference. */
  readonly outputs: Readonly<Record<string, TensorFile>>;
  /** What the reference of the same computation needs from ours (e.g. Sparge: blockMap, dequantized q/k). */
  readonly aux?: Readonly<Record<string, TensorFile>>;
  /** Op-specific settings of the check (e.g. Sparge's PV-skip mode and threshold). */
  readonly options?: Readonly<Record<string, unknown>>;
}

export interface CheckReply {
  readonly ok: true;
  readonly errors: Readonly<Record<string, ErrorStats>>;
  /** The reference our outputs were compared with (differs from prepare's for sparse ops). */
  readonly reference: Readonly<Record<string, ReferenceStats>>;
  /**
   * Per output, what the reference could not decide and took off |ours − reference| (Sparge: PV-skip
   * votes within rounding of their threshold): the largest excuse and how many elements had one.
   */
  readonly excused?: Readonly<Record<string, { readonly maxExcuse: number; readonly elements: number }>>;
}

export interface ErrorReply {
  readonly ok: false;
  readonly error: string;
}

export type ReferenceRequest = HelloRequest | PrepareRequest | CheckRequest;
