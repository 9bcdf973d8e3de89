// What the roles of a sparse MLA block share: its arguments, shared memory, barriers and key-tile count.
import { add, cast, mul, uint32, type Expr, type Target } from '@tilekit/codegen';
import type { DsaSparseMlaSmem } from './dsaSparseMlaSmem.ts';

/** Threads of a sparse MLA block's producer warpgroup (after the 256 consumer threads). */
export const DSA_SPARSE_MLA_PRODUCER_THREADS = 128;

/** The kernel's values the roles read (expressions of its parameters and of the block's setup). */
export interface DsaSparseMlaArgs {
  /** `const int*` of the block's index entries (its row's, from the block's first entry on). */
  readonly indices: Expr;
  /** `float` softmax scale (of q·k; natural-log domain). */
  readonly smScale: Expr;
  /** `const float*` per-head sinks (nullable), indexed by the head. */
  readonly attnSink: Expr;
  /** O row 0 of the block (64 rows of 512; `bf16*`, or `float*` for a partial epilogue), `float*` of its LSE and max-logit entry 0. */
  readonly out: Expr;
  readonly lse: Expr;
  readonly maxLogits: Expr;
  /** `int` elements between the LSE (and max-logit) entries of consecutive heads; absent: 1 (decode: s_q, FlashMLA's [b][h_q][s_q]). */
  readonly scalarStride?: Expr;
  /** `int` first head of the block (the sink's index of row 0). */
  readonly head0: Expr;
}

/** The block's shared state. */
export interface DsaSparseMlaCta {
  readonly target: Target;
  readonly args: DsaSparseMlaArgs;
  readonly layout: DsaSparseMlaSmem;
  /** `int` thread index in the block. */
  readonly tid: Expr;
  /** `uint8*` of the 1024-aligned shared memory and its `uint32` shared address. */
  readonly smem: Expr;
  readonly smemAddr: Expr;
  /** `int` index entries this block attends over (its token's top-k length) and key tiles (⌈len / 32⌉). */
  readonly len: Expr;
  readonly tiles: Expr;
  readonly full: (s: Expr) => Expr;
  readonly empty: (s: Expr) => Expr;
}

/** The `uint32` shared address of byte `offset` of the block's shared memory. */
export function dsaSparseMlaAddr(cta: DsaSparseMlaCta, offset: Expr | number): Expr {
  return add(cta.smemAddr, cast(offset, uint32));
}

/** Byte offset of key stage `s`. */
export function dsaSparseMlaStage(cta: DsaSparseMlaCta, s: Expr | number): Expr {
  return add(cta.layout.keys, mul(s, cta.layout.stageBytes));
}
