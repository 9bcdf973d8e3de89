// Sparse MLA prefill (FlashMLA's flash_mla_sparse_fwd on sm90, built from tilekit's layers): each
// query token's 64-head block attends over the latent rows its top-k index row selects.
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
  type SourceBuilder,
  type Target,
} from '@tilekit/codegen';
import { DsaArgumentError } from '../dsaArgumentError.ts';
import { DSA_SPARSE_MLA_V_DIM } from '../dsaSparseMlaShape.ts';
import { DSA_SPARSE_MLA_PRODUCER_THREADS, type DsaSparseMlaArgs } from './dsaSparseMlaCta.ts';
import { dsaSparseMlaChainSmem, DSA_SPARSE_MLA_CHAIN_KEYS, type DsaSparseMlaChainSmem } from './dsaSparseMlaChainSmem.ts';
import { DSA_SPARSE_MLA_HEAD_BLOCK } from './dsaSparseMlaSmem.ts';
import { emitDsaSparseMlaBlock } from './emitDsaSparseMlaBlock.ts';
import { emitDsaSparseMlaChainConsumers } from './emitDsaSparseMlaChainConsumers.ts';
import { emitDsaSparseMlaChainProducer } from './emitDsaSparseMlaChainProducer.ts';

/** The policy of a sparse MLA prefill instance: the register split of its roles. */
export interface DsaSparseMlaPrefillPolicy {
  /** Registers of each consumer thread after setmaxnreg.inc (a multiple of 8). */
  readonly consumerRegisters: number;
  /** Registers of each producer thread after setmaxnreg.dec (a multiple of 8). */
  readonly producerRegisters: number;
}

const CONSUMER_THREADS = 256;
const THREADS = CONSUMER_THREADS + DSA_SPARSE_MLA_PRODUCER_THREADS;

function prefillParams(target: Target) {
  const bf16 = target.dtypeType('bf16');
  const count = { range: [1, 2 ** 31 - 1] as const };
  return {
    q: kernelParam.pointer(bf16, { const: true, align: 16 }),
    kv: kernelParam.pointer(bf16, { const: true, align: 16 }),
    indices: kernelParam.pointer(int32, { const: true, align: 4 }),
    topk_length: kernelParam.pointer(int32, { const: true, align: 4, nullable: true }),
    attn_sink: kernelParam.pointer(float32, { const: true, align: 4, nullable: true }),
    out: kernelParam.pointer(bf16, { align: 16 }),
    max_logits: kernelParam.pointer(float32, { align: 4 }),
    lse: kernelParam.pointer(float32, { align: 4 }),
    s_q: kernelParam.i32(count),
    h_q: kernelParam.i32(count),
    s_kv: kernelParam.i32(count),
    topk: kernelParam.i32(count),
    kv_stride: kernelParam.i32(count),
    sm_scale: kernelParam.f32(),
  };
}

type PrefillParams = ReturnType<typeof prefillParams>;

/**
 * One sparse MLA prefill instance (sm_90a, 384 threads, 225 KiB of shared memory with the alignment slack). Block x
 * takes token t = x / (h_q / 64) and heads [64·hb, 64·hb + 64), hb = x mod (h_q / 64). Its 64 × 576 Q is copied once
 * into swizzled shared memory; a producer warpgroup gathers the latent rows of each pair of 64-entry blocks of the
 * token's index row (the first min(topk_length[t], topk) entries; −1 or any index outside [0, s_kv) is invalid: its row
 * is zero-filled and its scores are −∞) into two buffers, half by half; two consumer warpgroups take a block of each
 * pair with a chained running max (see emitDsaSparseMlaChainConsumers) and write O [s_q][h_q][512] bf16, LSE and max
 * logits [s_q][h_q] fp32 (FlashMLA's conventions, attn_sink applied to O). Postcondition (GPU spec): within
 * compareDsaSparseMla's bound of the CPU reference.
 */
export class DsaSparseMlaPrefillInstance extends KernelInstance<DsaSparseMlaPrefillPolicy, PrefillParams> {
  protected readonly sourceHeader = { title: 'DSA sparse MLA attention, prefill', generator: '@tilekit/kernel-dsa' };
  readonly smem: DsaSparseMlaChainSmem;

  constructor(policy: DsaSparseMlaPrefillPolicy, target: Target = sm90a) {
    checkSetMaxNRegBudget(THREADS, policy.producerRegisters, policy.consumerRegisters, (rule, found) => {
      throw new DsaArgumentError('policy', `register split: ${rule}`, found);
    });
    const key = instanceKey(
      'dsa_sparse_mla_prefill',
      { consumerRegisters: policy.consumerRegisters, producerRegisters: policy.producerRegisters, target: target.name },
      { tags: { consumerRegisters: 'cr', producerRegisters: 'pr' } },
    );
    const smem = dsaSparseMlaChainSmem();
    super({
      key,
      policy: Object.freeze({ ...policy }),
      target,
      params: prefillParams(target),
      threads: THREADS,
      sharedBytes: smem.used + 1024,
    });
    this.smem = smem;
  }

  /** The grid for `sQ` tokens of `hQ` heads (a multiple of 64): one block per token and 64 heads. */
  launch(sQ: number, hQ: number): { readonly grid: readonly [number, number, number]; readonly block: readonly [number, number, number] } {
    return { grid: [Math.max(1, sQ * (hQ / DSA_SPARSE_MLA_HEAD_BLOCK)), 1, 1], block: [THREADS, 1, 1] };
  }

  /** Emits the kernel's entry into `src`. */
  emit(src: SourceBuilder): void {
    const t = this.target;
    this.signature.defineEntry(src, { launchBounds: { maxThreads: THREADS, minBlocksPerSm: 1 } }, (b, a) => {
      const tid = b.let('tid', int32, cast(t.threadIdx('x'), int32), { range: [0, THREADS - 1] });
      const blocksPerToken = b.let('head_blocks', int32, div(a.h_q, DSA_SPARSE_MLA_HEAD_BLOCK));
      const token = b.let('token', int32, div(cast(t.blockIdx('x'), int32), blocksPerToken));
      const head0 = b.let('head0', int32, mul(mod(cast(t.blockIdx('x'), int32), blocksPerToken), DSA_SPARSE_MLA_HEAD_BLOCK));
      const row0 = b.let('row0', int64, add(mul(cast(token, int64), cast(a.h_q, int64)), cast(head0, int64)));
      const lenRaw = b.let('len_raw', int32, select(ne(select(a.topk_length, 1, 0), 0), index(a.topk_length, token), a.topk));
      const len = b.let('len', int32, minOf(maxOf(lenRaw, 0), a.topk));
      const tiles = b.let('tiles', int32, div(add(len, DSA_SPARSE_MLA_CHAIN_KEYS - 1), DSA_SPARSE_MLA_CHAIN_KEYS));
      emitDsaSparseMlaBlock(b, t, {
        consumers: CONSUMER_THREADS,
        layout: this.smem,
        smemComment: 'shared memory (1024-aligned): Q 9 slabs | 2 key buffers of 9 slabs | peer P | validity bytes | row max | barriers',
        arrivals: { full: 2 * DSA_SPARSE_MLA_PRODUCER_THREADS, empty: 128 },
        moreBarriers: [0, 1, 2, 3].map((i) => ({ at: this.smem.handoffs + 8 * i, arrivals: 128 })),
        ...{ tid, q: a.q, qRow0: row0, len, tiles },
        args: (x): DsaSparseMlaArgs => ({
          indices: x.let('token_indices', pointer(int32, { const: true }), add(a.indices, mul(cast(token, int64), cast(a.topk, int64)))),
          smScale: a.sm_scale,
          attnSink: a.attn_sink,
          // Plain expressions, computed where the epilogue uses them: not live (or spilled) across the key loop.
          out: add(a.out, mul(row0, DSA_SPARSE_MLA_V_DIM)),
          lse: add(a.lse, row0),
          maxLogits: add(a.max_logits, row0),
          head0,
        }),
        producer: (prod, cta) =>
          emitDsaSparseMlaChainProducer(
            prod,
            cta,
            { kv: a.kv, kvStride: a.kv_stride, sKv: a.s_kv },
            CONSUMER_THREADS,
            this.policy.producerRegisters,
          ),
        consumer: (cons, cta) => emitDsaSparseMlaChainConsumers(cons, cta, this.policy.consumerRegisters),
      });
    });
  }
}
