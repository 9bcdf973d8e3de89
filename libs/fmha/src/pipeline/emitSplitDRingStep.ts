// What the sm_80 split-D pipelines (FFPA's forward, FmhaFwdSm80SplitDPipeline, and its backward,
// FmhaBwdSm80SplitDPipeline) emit alike: the kernel body's set-up (thread index, the aligned
// dynamic shared memory, the block emitter), one ring step of `splitDRingStep`, nested block
// emitters and the cp.async copy of one tile into a ring slot.
import {
  add,
  cast,
  cpAsyncWaitGroup,
  declareAlignedDynamicShared,
  int32,
  mod,
  mul,
  pointer,
  uint8,
  type BlockBuilder,
  type Expr,
  type Target,
  type VarExpr,
} from '@tilekit/codegen';
import type { WgmmaSmemLayout } from '@tilekit/gemm';
import { BlockEmitter, makeTileWindow, type TensorView, type TileDistributionEncoding } from '@tilekit/tile';
import { splitDRingStep } from './fmhaFwdSm80SplitDPipeline.ts';
import { FMHA_DYNAMIC_SMEM } from './fmhaFwdWsPipeline.ts';
import type { FmhaSm80TileCopy } from './fmhaSm80TileCopy.ts';

/** What a split-D pipeline's emission steps share: the builder, target, arguments, block emitter and the aligned shared memory. */
export interface SplitDEmitContextBase<A> {
  readonly b: BlockBuilder;
  readonly target: Target;
  readonly args: A;
  readonly block: BlockEmitter;
  readonly smem: Expr;
}

/**
 * The body's set-up: requires cp.async and mma.sync, `tid`, then `comment` (the shared-memory plan),
 * the dynamic shared memory aligned up to 1024 bytes and the block emitter of `threads` threads.
 */
export function emitSplitDSetup(
  b: BlockBuilder,
  target: Target,
  threads: number,
  symbols: Readonly<Record<string, Expr>>,
  comment: string,
): { readonly tid: VarExpr; readonly smem: Expr; readonly block: BlockEmitter } {
  target.require('cp-async');
  target.require('mma-sync');
  const tid = b.let('tid', int32, cast(target.threadIdx('x'), int32), { range: [0, threads - 1] });
  b.comment(comment);
  const { smem } = declareAlignedDynamicShared(b, target, FMHA_DYNAMIC_SMEM);
  const block = new BlockEmitter(b, target, { numThreads: threads, index: { symbols } });
  return { tid, smem, block };
}

/** The ring's shape (a pipeline's): stages and the bytes of one slot. */
export interface SplitDRing {
  readonly policy: { readonly stages: number };
  readonly shared: { readonly slotBytes: number };
}

/**
 * One ring step g: `splitDRingStep`'s waits, barriers and load issues (`issue` of the load to copy)
 * around `compute`, given the slot's `uint8*` (`slot` = smem + (g mod stages) · slotBytes).
 */
export function emitSplitDRingStep(
  ctx: { readonly target: Target; readonly smem: Expr },
  ring: SplitDRing,
  lb: BlockEmitter,
  g: Expr,
  issue: (load: Expr) => void,
  compute: (slot: Expr) => void,
): void {
  const l = lb.b;
  for (const op of splitDRingStep(ring.policy.stages)) {
    if (op.op === 'issue') issue(op.ahead === 0 ? g : add(g, op.ahead));
    else if (op.op === 'wait') l.expr(cpAsyncWaitGroup(ctx.target, op.pending));
    else if (op.op === 'sync') lb.sync();
    else compute(l.let('slot', pointer(uint8), add(ctx.smem, mul(mod(g, ring.policy.stages), ring.shared.slotBytes))));
  }
}

/** A block emitter of `threads` threads for the nested builder `ib` (an `if` body) under `parent`. */
export function splitDNestedEmitter(
  ctx: SplitDEmitContextBase<unknown>,
  threads: number,
  ib: BlockBuilder,
  parent: BlockEmitter,
): BlockEmitter {
  return new BlockEmitter(ib, ctx.target, { numThreads: threads, index: ctx.block.indexOptions }, parent);
}

/**
 * Every thread's cp.async copies (`copy`) of the `lengths` tile of `view` at `origin` into `dst` (the
 * swizzled `layout`), distributed as `enc`: zero fill outside the sequence.
 */
export function emitSplitDCopyTile(
  copy: FmhaSm80TileCopy,
  target: Target,
  be: BlockEmitter,
  view: TensorView,
  lengths: readonly [number, number],
  origin: readonly [Expr, Expr],
  enc: TileDistributionEncoding,
  layout: WgmmaSmemLayout,
  dst: Expr,
): void {
  const win = makeTileWindow(be, { view, lengths, origin, encoding: enc, originAlignment: [lengths[0], lengths[1]] });
  be.threads((t) => copy.emit(t, target, win, enc, layout, dst));
}
