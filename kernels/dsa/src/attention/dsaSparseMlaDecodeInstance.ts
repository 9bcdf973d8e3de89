// Sparse MLA decode over the paged FP8 MLA cache (FlashMLA's sparse decode on sm90, built from tilekit's layers):
// each query row's 64-head block attends over one split of the cache slots its top-k index row selects.
import {
  add,
  cast,
  checkSetMaxNRegBudget,
  div,
  float32,
  index,
  instanceKey,
  int32,
  int64,
  kernelParam,
  KernelInstance,
  maxOf,
  minOf,
  mod,
  mul,
  ne,
  pointer,
  select,
  sm90a,
  sub,
  uint8,
  type BlockBuilder,
  type Expr,
  type SourceBuilder,
  type Target,
} from '@tilekit/codegen';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_MLA_PAGE_BYTES } from '../dsaMlaCacheLayout.ts';
import { DSA_SPARSE_MLA_V_DIM } from '../dsaSparseMlaShape.ts';
import { DSA_SPARSE_MLA_PRODUCER_THREADS, type DsaSparseMlaArgs } from './dsaSparseMlaCta.ts';
import { dsaSparseMlaSmem, DSA_SPARSE_MLA_HEAD_BLOCK, DSA_SPARSE_MLA_KEYS, type DsaSparseMlaSmem } from './dsaSparseMlaSmem.ts';
import { emitDsaSparseMlaBlock } from './emitDsaSparseMlaBlock.ts';
import { emitDsaSparseMlaConsumers } from './emitDsaSparseMlaConsumers.ts';
import { emitDsaSparseMlaEpilogue } from './emitDsaSparseMlaEpilogue.ts';
import { emitDsaSparseMlaFp8Producer } from './emitDsaSparseMlaFp8Producer.ts';
import { emitDsaSparseMlaPartialEpilogue } from './emitDsaSparseMlaPartialEpilogue.ts';

/**
 * The policy of a sparse MLA decode instance: the register split of its roles and what a block writes —
 * `final` (bf16 O, LSE and max logits in FlashMLA's decode layouts, the sink applied; one split) or
 * `partial` (one split's fp32 O, LSE and max logits, merged by the combine kernel).
 */
export interface DsaSparseMlaDecodePolicy {
  readonly consumerRegisters: number;
  readonly producerRegisters: number;
  readonly output: 'final' | 'partial';
}

const CONSUMER_THREADS = 256;
const THREADS = CONSUMER_THREADS + DSA_SPARSE_MLA_PRODUCER_THREADS;

function decodeParams(target: Target, output: DsaSparseMlaDecodePolicy['output']) {
  const bf16 = target.dtypeType('bf16');
  const count = { range: [1, 2 ** 31 - 1] as const };
  return {
    q: kernelParam.pointer(bf16, { const: true, align: 16 }),
    cache: kernelParam.pointer(uint8, { const: true, align: 16 }),
    indices: kernelParam.pointer(int32, { const: true, align: 4 }),
    topk_length: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    attn_sink: kernelParam.pointer(float32, { const: true, align: 4, nullable: true }),
    out: output === 'final' ? kernelParam.pointer(bf16, { align: 16 }) : kernelParam.pointer(float32, { align: 16 }),
    max_logits: kernelParam.pointer(float32, { align: 4 }),
    lse: kernelParam.pointer(float32, { align: 4 }),
    page_stride: kernelParam.i64({ range: [DSA_MLA_PAGE_BYTES, 2 ** 53] }),
    num_pages: kernelParam.i32(count),
    rows: kernelParam.i32(count),
    s_q: kernelParam.i32({ range: [1, 2] }),
    h_q: kernelParam.i32(count),
    topk: kernelParam.i32(count),
    tiles_per_split: kernelParam.i32(count),
    sm_scale: kernelParam.f32(),
  };
}

type DecodeParams = ReturnType<typeof decodeParams>;
type DecodeArgs = { readonly [K in keyof DecodeParams]: Expr };

/**
 * One sparse MLA decode instance (sm_90a, 384 threads, 222 KiB of shared memory with the alignment slack). Block (x, y) takes query row
 * r = x / (h_q / 64) (sequence r / s_q, query r mod s_q; q [rows][h_q][576]), heads [64·hb, +64) with
 * hb = x mod (h_q / 64), and split y: index entries [32·tiles_per_split·y, +32·tiles_per_split) of its
 * row's first min(topk_length[r / s_q], topk). Q is resident; the FP8 producer dequantizes the selected
 * cache slots (page · 64 + offset; −1, or a page ≥ num_pages, is invalid) into the prefill's key ring and
 * the prefill's two consumer warpgroups attend; `final` writes O [rows][h_q][512] bf16 and LSE / max logits
 * [b][h_q][s_q], `partial` writes split y's fp32 O at out + ((y · rows + r) · h_q + h) · 512 and its LSE
 * and max logit at (y · rows + r) · h_q + h. Postcondition (GPU spec): within compareDsaSparseMla's bound
 * of the CPU reference (after the combine for `partial`).
 */
export class DsaSparseMlaDecodeInstance extends KernelInstance<DsaSparseMlaDecodePolicy, DecodeParams> {
  protected readonly sourceHeader = { title: 'DSA sparse MLA attention, FP8-cache decode', generator: '@tilekit/kernel-dsa' };
  readonly smem: DsaSparseMlaSmem;

  constructor(policy: DsaSparseMlaDecodePolicy, target: Target = sm90a) {
    checkSetMaxNRegBudget(THREADS, policy.producerRegisters, policy.consumerRegisters, (rule, found) => {
      throw new DsaArgumentError('policy', `register split: ${rule}`, found);
    });
    if (policy.output !== 'final' && policy.output !== 'partial')
      throw new DsaArgumentError('policy.output', 'must be "final" or "partial"', policy.output);
    const key = instanceKey(
      'dsa_sparse_mla_decode',
      {
        output: policy.output,
        consumerRegisters: policy.consumerRegisters,
        producerRegisters: policy.producerRegisters,
        target: target.name,
      },
      { tags: { consumerRegisters: 'cr', producerRegisters: 'pr', output: '' } },
    );
    const smem = dsaSparseMlaSmem({ fp8Scales: true });
    super({
      key,
      policy: Object.freeze({ ...policy }),
      target,
      params: decodeParams(target, policy.output),
      threads: THREADS,
      sharedBytes: smem.used + 1024,
    });
    this.smem = smem;
  }

  /** The grid for `rows` query rows (b · s_q) of `hQ` heads in `splits` splits. */
  launch(
    rows: number,
    hQ: number,
    splits: number,
  ): { readonly grid: readonly [number, number, number]; readonly block: readonly [number, number, number] } {
    return { grid: [Math.max(1, rows * (hQ / DSA_SPARSE_MLA_HEAD_BLOCK)), Math.max(1, splits), 1], block: [THREADS, 1, 1] };
  }

  /** Emits the kernel's entry into `src`. */
  emit(src: SourceBuilder): void {
    const t = this.target;
    this.signature.defineEntry(src, { launchBounds: { maxThreads: THREADS, minBlocksPerSm: 1 } }, (b, a) => {
      const tid = b.let('tid', int32, cast(t.threadIdx('x'), int32), { range: [0, THREADS - 1] });
      const blocksPerRow = b.let('head_blocks', int32, div(a.h_q, DSA_SPARSE_MLA_HEAD_BLOCK));
      const row = b.let('row', int32, div(cast(t.blockIdx('x'), int32), blocksPerRow));
      const split = b.let('split', int32, cast(t.blockIdx('y'), int32));
      const head0 = b.let('head0', int32, mul(mod(cast(t.blockIdx('x'), int32), blocksPerRow), DSA_SPARSE_MLA_HEAD_BLOCK));
      const qRow0 = b.let('q_row0', int64, add(mul(cast(row, int64), cast(a.h_q, int64)), cast(head0, int64)));
      const seq = b.let('seq', int32, div(row, a.s_q));
      const lenRaw = b.let('len_raw', int32, select(ne(select(a.topk_length, 1, 0), 0), index(a.topk_length, seq), a.topk));
      const rowLen = b.let('row_len', int32, minOf(maxOf(lenRaw, 0), a.topk));
      const first = b.let('split_first', int32, mul(mul(split, a.tiles_per_split), DSA_SPARSE_MLA_KEYS));
      const len = b.let('len', int32, minOf(maxOf(sub(rowLen, first), 0), mul(a.tiles_per_split, DSA_SPARSE_MLA_KEYS)));
      const tiles = b.let('tiles', int32, div(add(len, DSA_SPARSE_MLA_KEYS - 1), DSA_SPARSE_MLA_KEYS));
      const epilogue = this.policy.output === 'final' ? emitDsaSparseMlaEpilogue : emitDsaSparseMlaPartialEpilogue;
      emitDsaSparseMlaBlock(b, t, {
        consumers: CONSUMER_THREADS,
        layout: this.smem,
        smemComment:
          'shared memory (1024-aligned): Q 9 slabs | 4 key stages of 9 slabs | validity bytes | row max / row sum exchanges | barriers',
        ...{ tid, q: a.q, qRow0, len, tiles },
        args: (x): DsaSparseMlaArgs => ({
          indices: x.let(
            'split_indices',
            pointer(int32, { const: true }),
            add(a.indices, add(mul(cast(row, int64), cast(a.topk, int64)), cast(first, int64))),
          ),
          smScale: a.sm_scale,
          attnSink: a.attn_sink,
          head0,
          ...this.outputs(x, a, { row, split, seq, head0, qRow0 }),
        }),
        producer: (prod, cta) =>
          emitDsaSparseMlaFp8Producer(
            prod,
            cta,
            { cache: a.cache, pageStride: a.page_stride, numPages: a.num_pages },
            CONSUMER_THREADS,
            this.policy.producerRegisters,
          ),
        consumer: (cons, cta) => emitDsaSparseMlaConsumers(cons, cta, this.policy.consumerRegisters, epilogue),
      });
    });
  }

  /** Where the block writes: O rows, the LSE and max-logit entry of its head 0, and (final) their stride s_q. */
  private outputs(
    b: BlockBuilder,
    a: DecodeArgs,
    v: { readonly row: Expr; readonly split: Expr; readonly seq: Expr; readonly head0: Expr; readonly qRow0: Expr },
  ): Pick<DsaSparseMlaArgs, 'out' | 'lse' | 'maxLogits' | 'scalarStride'> {
    if (this.policy.output === 'final') {
      const at = b.let(
        'scalar0',
        int64,
        add(
          mul(add(mul(cast(v.seq, int64), cast(a.h_q, int64)), cast(v.head0, int64)), cast(a.s_q, int64)),
          cast(mod(v.row, a.s_q), int64),
        ),
      );
      return {
        out: b.let('out_rows', a.out.type, add(a.out, mul(v.qRow0, DSA_SPARSE_MLA_V_DIM))),
        lse: b.let('lse_rows', pointer(float32), add(a.lse, at)),
        maxLogits: b.let('max_rows', pointer(float32), add(a.max_logits, at)),
        scalarStride: a.s_q,
      };
    }
    const row0 = b.let(
      'part_row0',
      int64,
      add(mul(add(mul(cast(v.split, int64), cast(a.rows, int64)), cast(v.row, int64)), cast(a.h_q, int64)), cast(v.head0, int64)),
    );
    return {
      out: b.let('out_rows', a.out.type, add(a.out, mul(row0, DSA_SPARSE_MLA_V_DIM))),
      lse: b.let('lse_rows', pointer(float32), add(a.lse, row0)),
      maxLogits: b.let('max_rows', pointer(float32), add(a.max_logits, row0)),
    };
  }
}
