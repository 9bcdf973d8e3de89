import { runCli } from '@tilekit/host';
import { FmhaFwdArgumentError } from '@tilekit/kernel-fmha-fwd';
import { SpargeArgumentError, type SpargeBlockMap } from '@tilekit/kernel-sparge';
import type { ArgumentError } from '@tilekit/numeric';
import { NvccCompiler, probe } from '@tilekit/runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compareSpargeAttention,
  parsePerHead,
  planSpargeExample,
  runSpargeExample,
  spargeAttentionReference,
  spargeAttentionValues,
  spargeCpuBlockMap,
  spargeDenseFlops,
  spargeExampleInputs,
  spargeExampleKernels,
  SpargeFlagError,
  spargeParser,
  spargeProblemFromArgs,
  summarizeSpargeMap,
} from './spargeExample.ts';

const hasNvcc = NvccCompiler.available();
const hasGpu = probe().deviceCount > 0;
if (!hasNvcc) console.warn('\n!!! SKIPPING the example_sparge run: nvcc not found (set TILEKIT_NVCC). !!!\n');

async function run(argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runSpargeExample(spargeParser.parse(argv), (l) => lines.push(l));
  return { code, out: lines.join('\n') };
}

async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(spargeParser, argv, (args) => runSpargeExample(args, (l) => (stdout += `${l}\n`)), {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    exit: () => undefined,
  });
  return { code, stdout, stderr };
}

const plan = (argv: string[]) => planSpargeExample(spargeParser.parse(argv));

describe('example_sparge flags', () => {
  it("-? lists the CK port's flags with their defaults and runs nothing", async () => {
    const { code, stdout, stderr } = await cli(['-?']);
    expect([code, stderr]).toEqual([0, '']);
    expect(spargeParser.flags().map((f) => f.key)).toEqual([
      'pipeline',
      'b',
      'h',
      'h_k',
      's',
      's_k',
      'd',
      'topk',
      'cdfthreshd',
      'simthreshd1',
      'pv_mode',
      'pv_threshold',
      'causal',
      'smooth_k',
      'sink',
      'int8',
      'v',
      'print_sparsity',
      'prec',
      'seed',
      'warmup',
      'repeat',
      'inputs',
    ]);
    for (const f of spargeParser.flags()) expect(stdout, `-${f.key}`).toMatch(new RegExp(`^-${f.key} `, 'm'));
    expect(stdout).not.toContain('example_sparge: fp16');
  });

  it('defaults: vsa, b1 h2 s1024 d128, topk 0.4 (simthreshd1 −0.1), pv none (threshold 50), not causal, smooth_k, sink, no int8', () => {
    const args = spargeParser.parse([]);
    expect(args.get('v')).toBe(false);
    expect(args.get('print_sparsity')).toBe(false);
    expect(args.get('inputs')).toBe('synthetic');
    expect(spargeProblemFromArgs(args)).toEqual({
      dtype: 'fp16',
      batch: 1,
      nheadQ: 2,
      hdimQ: 128,
      seqlenQ: 1024,
      seqlenK: 1024,
      lse: true,
      pipeline: 'vsa',
      pvMode: 'none',
      params: { topk: 0.4, pvThreshold: 50, isCausal: false, smoothK: true, attentionSink: true, int8: false },
    });
    const p = plan([]);
    expect(p.params).toMatchObject({
      selection: 'topk',
      selectionValue: [0.4, 0.4],
      simthreshd1: [-0.1, -0.1],
      pvThreshold: [50, 50],
      blockQ: 128,
      blockK: 128,
    });
    expect(p.instance.name).toBe('sparge_fwd_sm90_vsa_fp16_d128_f16qk_none_128x128_s2_nopvskip');
    expect(p.attention).toMatchObject({ qBlocks: 8, kBlocks: 8, nheadK: 2 });
    expect(spargeDenseFlops(p)).toBe(4 * 2 * 1024 * 1024 * 128);
    expect(spargeDenseFlops(plan(['-causal=1']))).toBe(2 * 2 * 1024 * 1024 * 128);
  });

  it('-cdfthreshd replaces the default topk (simthreshd1 default 0.6); per-head lists for every per-head flag', () => {
    const cdf = plan(['-cdfthreshd=0.9']);
    expect(cdf.params).toMatchObject({ selection: 'cdf', selectionValue: [0.9, 0.9], simthreshd1: [0.6, 0.6] });
    const p = plan([
      '-h=3',
      '-topk=0.1,0.2,0.3',
      '-simthreshd1=0.5,-1,0.25',
      '-pv_threshold=inf,10,20',
      '-pv_mode=warp',
      '-pipeline=jenga',
      '-causal=1',
      '-int8=1',
      '-prec=bf16',
      '-d=64',
    ]);
    expect(p.params).toMatchObject({
      selectionValue: [0.1, 0.2, 0.3],
      simthreshd1: [0.5, -1, 0.25],
      pvThreshold: [Infinity, 10, 20],
      isCausal: true,
      int8: true,
    });
    expect(p.instance.name).toMatch(/^sparge_fwd_sm90_jenga_bf16_d64_int8_window_.*_pvskip$/);
    expect(p.attention.pvMode).toBe('warp');
  });

  it('parsePerHead reads back any list of numbers it is given (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(Infinity)), { minLength: 1, maxLength: 9 }),
        (xs) => {
          const got = parsePerHead('topk', xs.map((x) => (x === Infinity ? 'inf' : Object.is(x, -0) ? '-0' : String(x))).join(','));
          expect(got).toEqual(xs.length === 1 ? xs[0] : xs);
        },
      ),
    );
    expect(parsePerHead('topk', '')).toBeUndefined();
    expect(() => parsePerHead('topk', '0.1,,0.2')).toThrow(/-topk=0.1,,0.2: expected a number/);
  });

  it('bad hyperparameters and shapes are typed library errors naming the argument', () => {
    const cases: [string[], new (...a: never[]) => ArgumentError, string][] = [
      [['-topk=0.3', '-cdfthreshd=0.9'], SpargeArgumentError, 'topk/cdfthreshd'],
      [['-topk='], SpargeArgumentError, 'topk/cdfthreshd'],
      [['-topk=1.5'], SpargeArgumentError, 'topk'],
      [['-topk=0'], SpargeArgumentError, 'topk'],
      [['-cdfthreshd=1.2'], SpargeArgumentError, 'cdfthreshd'],
      [['-topk=0.3,0.4,0.5'], SpargeArgumentError, 'topk'],
      [['-h=2', '-pv_threshold=1,2,3'], SpargeArgumentError, 'pvThreshold'],
      [['-simthreshd1=0.1,inf'], SpargeArgumentError, 'simthreshd1[1]'],
      [['-d=96'], SpargeArgumentError, 'headDim'],
      [['-h=4', '-h_k=3'], FmhaFwdArgumentError, 'problem.nheadK'],
    ];
    for (const [argv, type, argument] of cases) {
      let thrown: unknown;
      try {
        plan(argv);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, argv.join(' ')).toBeInstanceOf(type);
      expect((thrown as ArgumentError).argument, argv.join(' ')).toBe(argument);
    }
  });

  it('on the command line a bad flag exits 2 with a one-line error naming it; the typed error is its cause', async () => {
    for (const [argv, flag, cause] of [
      [['-topk=0.3', '-cdfthreshd=0.9'], '-topk=0.3', 'topk/cdfthreshd'],
      [['-topk='], '-topk=', 'topk/cdfthreshd'],
      [['-topk=1.5'], '-topk=1.5', 'topk'],
      [['-h=2', '-topk=0.1,0.2,0.3'], '-topk=0.1,0.2,0.3', 'topk'],
      [['-d=96'], '-d=96', 'headDim'],
      [['-pv_threshold=-1'], '-pv_threshold=-1', 'pvThreshold'],
      [['-s_k=512'], '-s_k=512', 'shape.seqlenK'],
      [['-h=4', '-h_k=2'], '-h_k=2', 'shape.nheadK'],
      [['-pv_mode=row'], '-pv_mode=row', undefined],
      [['-topk=abc'], '-topk=abc', undefined],
      [['-repeat=0'], '-repeat=0', undefined],
    ] as const) {
      const { code, stdout, stderr } = await cli([...argv]);
      expect(code, argv.join(' ')).toBe(2);
      expect(stdout, argv.join(' ')).toBe('');
      expect(stderr.trimEnd().split('\n'), argv.join(' ')).toHaveLength(1);
      expect(stderr, argv.join(' ')).toContain(flag);
      if (cause !== undefined) {
        const error = await runSpargeExample(spargeParser.parse([...argv]), () => undefined).catch((e: unknown) => e);
        expect(error, argv.join(' ')).toBeInstanceOf(SpargeFlagError);
        expect((error as SpargeFlagError).cause, argv.join(' ')).toBeInstanceOf(SpargeArgumentError);
        expect((error as SpargeFlagError).cause.argument).toBe(cause);
      }
    }
  });
});

describe('example_sparge pieces', () => {
  it('lists the kernels the run launches: K mean (with smoothing), finalize, one pooling instance for 128-row blocks, selection, attention', () => {
    const names = (argv: string[]) => spargeExampleKernels(plan(argv)).map((k) => k.instance.name);
    const smooth = names(['-d=64']);
    expect(smooth).toHaveLength(5);
    expect(smooth[0]).toMatch(/^sparge_key_mean_partial_fp16_d64/);
    expect(smooth[1]).toMatch(/^sparge_key_mean_finalize_d64/);
    expect(smooth[2]).toMatch(/^sparge_pool_fp16_d64_b128/);
    expect(smooth[3]).toMatch(/^sparge_select_d64_r8/);
    expect(smooth[4]).toBe('sparge_fwd_sm90_vsa_fp16_d64_f16qk_none_128x128_s2_nopvskip');
    expect(names(['-smooth_k=0', '-prec=bf16'])).toHaveLength(4);
    // 1024 key blocks need the 4-rows-per-CTA selection instance.
    expect(names(['-s=131072', '-h=1'])[3]).toMatch(/^sparge_select_d128_r4/);
  });

  it('summarizeSpargeMap: sparsity = 1 − visited / dense blocks and the histogram counts every query block (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 700 }),
        fc.boolean(),
        fc.integer(),
        (batch, nhead, s, causal, seed) => {
          const qBlocks = Math.ceil(s / 128);
          const kBlocks = Math.ceil(s / 128);
          let x = seed >>> 0 || 1;
          const map = Uint8Array.from({ length: batch * nhead * qBlocks * kBlocks }, () => (x = (x * 48271) % 2147483647) & 1);
          const m: SpargeBlockMap = { batch, nhead, qBlocks, kBlocks, map };
          const sum = summarizeSpargeMap(m, 128, 128, s, causal);
          const allowedPerHead = causal ? (qBlocks * (qBlocks + 1)) / 2 : qBlocks * kBlocks; // square grid, equal blocks: the lower triangle
          expect(sum.sparsity).toBeCloseTo(1 - map.reduce((a, v) => a + v, 0) / (batch * nhead * allowedPerHead), 12);
          expect(sum.histogram.reduce((a, v) => a + v, 0)).toBe(batch * nhead * qBlocks);
          expect(sum.histogram.reduce((a, v, n) => a + v * n, 0)).toBe(map.reduce((a, v) => a + v, 0));
          expect(sum.perHead).toHaveLength(nhead);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('the attention comparison accepts the reference itself and rejects a perturbed output', () => {
    const p = plan(['-s=200', '-h=1', '-d=64', '-inputs=uniform']);
    const inputs = spargeExampleInputs(p, 'uniform', 3);
    const map = spargeCpuBlockMap(p, inputs);
    const values = spargeAttentionValues(p, inputs);
    const ref = spargeAttentionReference(p, inputs.shape, values, map.blockMap);
    expect(compareSpargeAttention(p, values, ref, ref.o, ref.lse).ok).toBe(true);
    const wrong = compareSpargeAttention(
      p,
      values,
      ref,
      ref.o.map((v) => v + 0.05),
      ref.lse,
    );
    expect(wrong.ok).toBe(false);
    expect(wrong.message).toMatch(/outside; first: O\[row 0/);
    const nan = compareSpargeAttention(
      p,
      values,
      ref,
      ref.o,
      ref.lse.map(() => NaN),
    );
    expect(nan.ok).toBe(false);
  });
});

describe('example_sparge without a GPU', () => {
  it.runIf(hasNvcc && !hasGpu)(
    '-s=256 -h=2 -d=64 -v=1: compiles and lists every kernel, runs both CPU references, reports sparsity and L1, says no device, exits 0',
    async () => {
      const { code, out } = await run(['-s=256', '-h=2', '-d=64', '-v=1', '-print_sparsity=1']);
      expect(code).toBe(0);
      expect(out).toContain('example_sparge: fp16 vsa b1 h2 s256x256 d64, topk 0.4, simthreshd1 -0.1, pv_mode none');
      for (const name of [
        'sparge_key_mean_partial_fp16_d64',
        'sparge_key_mean_finalize_d64',
        'sparge_pool_fp16_d64_b128',
        'sparge_select_d64_r8',
        'sparge_fwd_sm90_vsa_fp16_d64_f16qk_none_128x128_s2_nopvskip',
      ]) {
        expect(out).toMatch(new RegExp(`^${name}\\S* +block map|^${name}\\S* +attention`, 'm'));
      }
      expect(out).toMatch(/ 0\/0 /);
      expect(out).toContain('warning: the CPU attention reference is O(s²·d)');
      const m = /CPU reference: sparsity ([\d.]+), relative L1 vs dense attention ([\d.e+-]+)/.exec(out);
      expect(m).not.toBeNull();
      const sparsity = Number(m![1]);
      const l1 = Number(m![2]);
      // 2×2 blocks, topk 0.4 → one selected block per query block plus the sink: 3 of 4 or 2 of 4 blocks visited.
      expect(sparsity).toBeGreaterThan(0);
      expect(sparsity).toBeLessThan(1);
      expect(l1).toBeGreaterThan(0);
      expect(l1).toBeLessThan(0.2);
      expect(out).toMatch(
        /achieved sparsity \(CPU block map\): [\d.]+\n {2}per head: h0 [\d.]+, h1 [\d.]+\n {2}visited key blocks per query block/,
      );
      expect(out).toContain('no CUDA device found');
    },
    300_000,
  );

  it.runIf(hasNvcc && !hasGpu)(
    'PV skip, causal, cdf per head, uniform GQA inputs with s_k ≠ s: the PV-skip model runs and the run still ends without a device',
    async () => {
      const { code, out } = await run([
        '-s=192',
        '-s_k=320',
        '-h=2',
        '-h_k=1',
        '-d=64',
        '-v=1',
        '-causal=1',
        '-pv_mode=warp',
        '-pv_threshold=4,inf',
        '-cdfthreshd=0.5,0.9',
        '-inputs=uniform',
      ]);
      expect(code).toBe(0);
      expect(out).toMatch(/sparge_fwd_sm90_vsa_fp16_d64_f16qk_window_128x128_s2_pvskip/);
      expect(out).toMatch(/CPU PV-skip model: \d+ \(block, vote group\) P·V products computed, \d+ skipped/);
      expect(out).toContain('no CUDA device found');
    },
    300_000,
  );
});
