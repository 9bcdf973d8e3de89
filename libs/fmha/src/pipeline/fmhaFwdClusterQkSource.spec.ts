// The cluster Q·Kᵀ source of the sm_90a forward (two CTAs of a cluster split the head dim and
// exchange partial S through distributed shared memory): its rules (checked when the pipeline is
// built), its instance-key part, the shared memory and barriers it plans, and the cluster barriers it
// emits. The whole emitted kernel is checked by @tilekit/fmha-launch (fmhaFwdInstanceCluster.spec.ts);
// its numerics are GPU-tested by @tilekit/kernel-ffpa (ffpa.gpu.spec.ts).
import { SourceBuilder, sm90a } from '@tilekit/codegen';
import { BlockGemmPolicyError } from '@tilekit/gemm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fmhaFwdWsTestPolicy } from '../testing/fmhaFwdWsTestPolicy.ts';
import { FmhaFwdChunkedQkSource } from './fmhaFwdChunkedQkSource.ts';
import { FmhaFwdClusterQkSource } from './fmhaFwdClusterQkSource.ts';
import { FMHA_FWD_SEQUENTIAL_SCHEDULE, FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE } from './fmhaFwdConsumerSchedule.ts';
import { FMHA_FWD_PINGPONG_SCHEDULE } from './fmhaFwdPingPongSchedule.ts';
import { FmhaFwdRecomputeSOutputSplit } from './fmhaFwdOutputSplit.ts';
import { FmhaFwdSharePOutputSplit } from './fmhaFwdSharePOutputSplit.ts';
import { FmhaFwdWsPipeline, type FmhaFwdWsPolicy } from './fmhaFwdWsPipeline.ts';

/** FFPA's d768 cluster policy: 384 columns of O per CTA, 64 × 64 tiles, the shared-P split. */
const policy: FmhaFwdWsPolicy = fmhaFwdWsTestPolicy({
  headDim: 768,
  headDimV: 384,
  tileM: 64,
  tileN: 64,
  qkSource: new FmhaFwdClusterQkSource(4),
  outputSplit: new FmhaFwdSharePOutputSplit(),
});

/** The BlockGemmPolicyError `run` throws (undefined if none). */
function policyError(run: () => unknown): BlockGemmPolicyError | undefined {
  try {
    run();
  } catch (e) {
    if (e instanceof BlockGemmPolicyError) return e;
    throw e;
  }
  return undefined;
}

describe('FmhaFwdClusterQkSource: rules', () => {
  it('takes the FFPA cluster policies: d 640/768 (and other multiples of 128), both schedules of the shared-P split', () => {
    for (const [headDim, headDimV] of [
      [640, 320],
      [768, 384],
      [256, 256],
      [1024, 256],
    ] as const)
      expect(() => new FmhaFwdWsPipeline({ ...policy, headDim, headDimV })).not.toThrow();
    // d_v 512 per CTA with the 4-deep ring does not fit shared memory (the catalog's reason to stop at 384); a 2-deep one does.
    expect(() => new FmhaFwdWsPipeline({ ...policy, headDim: 1024, headDimV: 512 })).toThrow(/227 KiB/);
    expect(() => new FmhaFwdWsPipeline({ ...policy, headDim: 1024, headDimV: 512, qkSource: new FmhaFwdClusterQkSource(2) })).not.toThrow();
    for (const schedule of [FMHA_FWD_SEQUENTIAL_SCHEDULE, FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE])
      expect(() => new FmhaFwdWsPipeline({ ...policy, schedule })).not.toThrow();
  });

  it('rejects a head dim that does not split into two whole sets of 64-column chunks (a multiple of 64, not of 128)', () => {
    for (const headDim of [320, 576, 704, 960]) {
      const e = policyError(() => new FmhaFwdWsPipeline({ ...policy, headDim }));
      expect(e, `d${headDim}`).toBeInstanceOf(BlockGemmPolicyError);
      expect(e!.message).toMatch(/headDim a multiple of 128/);
      // The same head dim is fine for the one-CTA chunked source.
      expect(() => new FmhaFwdWsPipeline({ ...policy, headDim, qkSource: new FmhaFwdChunkedQkSource(4) })).not.toThrow();
    }
    expect(() => new FmhaFwdWsPipeline({ ...policy, headDim: 736 })).toThrow(/64-column chunks/);
  });

  it('rejects tiles other than 64 × 64 (tileN 128; tileM 128 without an output split)', () => {
    expect(() => new FmhaFwdWsPipeline({ ...policy, tileN: 128 })).toThrow(/tileM and tileN 64/);
    const { outputSplit: _o, ...unsplit } = policy;
    const tall = { ...unsplit, headDimV: 256, tileM: 128 };
    expect(() => new FmhaFwdWsPipeline(tall)).toThrow(BlockGemmPolicyError);
    expect(() => new FmhaFwdWsPipeline(tall)).toThrow(/tileM and tileN 64/);
    expect(() => new FmhaFwdWsPipeline({ ...tall, tileM: 64 })).not.toThrow();
    expect(() => new FmhaFwdWsPipeline({ ...tall, qkSource: new FmhaFwdChunkedQkSource(4) })).not.toThrow();
  });

  it('rejects an output split with two scoring warpgroups (recompute S) but takes it on the chunked source', () => {
    const recompute = { ...policy, outputSplit: new FmhaFwdRecomputeSOutputSplit(2) };
    expect(new FmhaFwdRecomputeSOutputSplit(2).scoringSlices).toBe(2);
    const e = policyError(() => new FmhaFwdWsPipeline(recompute));
    expect(e).toBeInstanceOf(BlockGemmPolicyError);
    expect(e!.message).toMatch(/S of one scoring warpgroup/);
    expect(() => new FmhaFwdWsPipeline({ ...recompute, qkSource: new FmhaFwdChunkedQkSource(4) })).not.toThrow();
  });

  it('rejects the ping-pong schedule (as the chunked source does)', () => {
    const { outputSplit: _o, ...unsplit } = policy;
    const pingPong = { ...unsplit, headDimV: 128, tileM: 64, consumerRegisters: 240, schedule: FMHA_FWD_PINGPONG_SCHEDULE };
    const e = policyError(() => new FmhaFwdClusterQkSource(4).check(pingPong));
    expect(e).toBeInstanceOf(BlockGemmPolicyError);
    expect(e!.message).toMatch(/ping-pong/);
    expect(() => new FmhaFwdClusterQkSource(4).check({ ...pingPong, schedule: FMHA_FWD_SEQUENTIAL_SCHEDULE })).not.toThrow();
  });

  it('check() alone applies each rule to the policy it is given', () => {
    const source = new FmhaFwdClusterQkSource(4);
    expect(() => source.check(policy)).not.toThrow();
    expect(() => source.check({ ...policy, headDim: 704 })).toThrow(/multiple of 128/);
    expect(() => source.check({ ...policy, tileM: 128 })).toThrow(/tileM and tileN 64/);
    expect(() => source.check({ ...policy, tileN: 32 })).toThrow(/tileM and tileN 64/);
    expect(() => source.check({ ...policy, outputSplit: new FmhaFwdRecomputeSOutputSplit(2) })).toThrow(/one scoring warpgroup/);
    for (const n of [0, 1, 3, 16]) expect(() => new FmhaFwdClusterQkSource(n)).toThrow(/stages/);
  });
});

describe('FmhaFwdClusterQkSource: key, plan, emitted barriers', () => {
  it('keys: the chunk stages and a cluster of 2 (tags qkc and cl); tag cluster, 2 CTAs, frozen', () => {
    const s = new FmhaFwdClusterQkSource(4);
    expect(s.key).toEqual({ config: { qkChunkStages: 4, qkCluster: 2 }, tags: { qkChunkStages: 'qkc', qkCluster: 'cl' } });
    expect(new FmhaFwdClusterQkSource(2).key.config).toEqual({ qkChunkStages: 2, qkCluster: 2 });
    expect(s.tag).toBe('cluster');
    expect(s.clusterCtas).toBe(2);
    expect(s.stages).toBe(4);
    expect(s.maxHeadDim).toBe(1024);
    expect(Object.isFrozen(s)).toBe(true);
    expect(new FmhaFwdChunkedQkSource(4).tag).toBe('chunked');
    expect('clusterCtas' in new FmhaFwdChunkedQkSource(4)).toBe(false);
  });

  it('plans two fp32 64 × 64 exchange buffers in the Q region (2·64·64·4 bytes) and 4 barriers beyond the chunk ring', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 8 }), fc.constantFrom(2, 4, 8), (halfChunks, stages) => {
        const dims = { headDim: 128 * halfChunks, headDimV: 128 };
        const cl = new FmhaFwdWsPipeline({ ...policy, ...dims, qkSource: new FmhaFwdClusterQkSource(stages) });
        const ch = new FmhaFwdWsPipeline({ ...policy, ...dims, qkSource: new FmhaFwdChunkedQkSource(stages) });
        expect(cl.qBytes).toBe(2 * 64 * 64 * 4);
        expect(cl.qBytes).toBe(32768);
        expect(ch.qBytes).toBe(0);
        expect(cl.kOffset).toBe(cl.qBytes);
        expect(cl.kStages).toBe(stages);
        expect(cl.kStageBytes).toBe(ch.kStageBytes);
        expect(cl.vOffset - ch.vOffset).toBe(32768);
        // Ring barriers: 1 + 4 · stages of the pipeline, 2 · stages of the chunk ring, then full[2] and empty[2].
        expect(cl.keyTileOffset - cl.barrierOffset).toBe(8 * (1 + 4 * 2 + 2 * stages + 4));
        expect(cl.keyTileOffset - cl.barrierOffset - (ch.keyTileOffset - ch.barrierOffset)).toBe(8 * 4);
        const qk = cl.qk;
        const ring = new FmhaFwdChunkedQkSource(stages).plan(qk);
        expect(new FmhaFwdClusterQkSource(stages).plan(qk)).toEqual({ ...ring, qBytes: 32768, barriers: ring.barriers + 4 });
      }),
    );
  });

  it('emits a cluster barrier (arrive.release + wait.acquire) after the barriers are initialised and before the consumers leave', () => {
    const s = new FmhaFwdClusterQkSource(4);
    const src = new SourceBuilder({ dialect: sm90a });
    src.function({ name: 'k', qualifiers: sm90a.kernelQualifiers() }, (b) => {
      s.emitAfterInit(b, sm90a);
      s.emitBeforeExit(b, sm90a);
    });
    const text = src.render();
    expect(text).toContain('barrier.cluster.arrive.release;');
    expect(text).toContain('barrier.cluster.wait.acquire;');
    const body = text.slice(text.indexOf('extern "C"'));
    expect(body.match(/\btk_cluster_sync\(\)/g)).toHaveLength(2);
    expect(body.indexOf('have initialised their barriers')).toBeLessThan(body.indexOf("done with this CTA's shared memory"));
    expect(new FmhaFwdChunkedQkSource(4)).not.toHaveProperty('emitAfterInit');
  });
});
