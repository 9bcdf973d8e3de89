import { runCli } from '@tilekit/host';
import { checkFmhaFwdProblem, fmhaFwdOperandElements } from '@tilekit/kernel-fmha-fwd';
import { encode } from '@tilekit/numeric';
import { NvccCompiler, probe } from '@tilekit/runtime';
import { describe, expect, it } from 'vitest';
import { compareWithReference, fmhaFwdParser, fmhaFwdReferenceCheck, problemFromArgs, runFmhaFwdExample } from './fmhaFwdExample.ts';

const hasNvcc = NvccCompiler.available();
const hasGpu = probe().deviceCount > 0;
if (!hasNvcc) console.warn('\n!!! SKIPPING the example_fmha_fwd run: nvcc not found (set TILEKIT_NVCC). !!!\n');

async function run(argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runFmhaFwdExample(fmhaFwdParser.parse(argv), (l) => lines.push(l));
  return { code, out: lines.join('\n') };
}

async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(fmhaFwdParser, argv, (args) => runFmhaFwdExample(args, (l) => (stdout += `${l}\n`)), {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    exit: () => undefined,
  });
  return { code, stdout, stderr };
}

describe('example_fmha_fwd', () => {
  it("-? lists CK-tile's flags with their defaults and runs nothing", async () => {
    const { code, stdout, stderr } = await cli(['-?']);
    expect([code, stderr]).toEqual([0, '']);
    expect(fmhaFwdParser.flags().map((f) => f.key)).toEqual([
      'b',
      'h',
      'h_k',
      's',
      's_k',
      'd',
      'd_v',
      'mode',
      'mask',
      'iperm',
      'operm',
      'prec',
      'scale_s',
      'lse',
      'num_splits',
      'softcap',
      'alibi',
      'v',
      'seed',
      'warmup',
      'repeat',
    ]);
    for (const f of fmhaFwdParser.flags()) expect(stdout, `-${f.key}`).toMatch(new RegExp(`^-${f.key} `, 'm'));
    expect(stdout).not.toContain('example_fmha_fwd: fp16');
  });

  it('maps flags to a problem: batch mode, group mode lists, layouts, GQA, splits', () => {
    expect(
      problemFromArgs(
        fmhaFwdParser.parse([
          '-b=3',
          '-h=8',
          '-h_k=2',
          '-s=100',
          '-s_k=300',
          '-d=64',
          '-iperm=0',
          '-mask=b:3,0',
          '-lse=1',
          '-num_splits=4',
          '-scale_s=0.5',
        ]),
      ),
    ).toEqual({
      dtype: 'fp16',
      batch: 3,
      nheadQ: 8,
      nheadK: 2,
      hdimQ: 64,
      inputLayout: 'bshd',
      outputLayout: 'bhsd',
      mask: 'b:3,0',
      lse: true,
      scale: 0.5,
      splitKv: 4,
      seqlenQ: 100,
      seqlenK: 300,
    });
    const g = problemFromArgs(fmhaFwdParser.parse(['-mode=1', '-s=1,17,259,4097', '-s_k=5', '-num_splits=0', '-prec=bf16']));
    expect(g).toMatchObject({ batch: 4, seqstartQ: [0, 1, 18, 277, 4374], seqstartK: [0, 5, 10, 15, 20], splitKv: 'auto', dtype: 'bf16' });
    expect(problemFromArgs(fmhaFwdParser.parse(['-mode=1', '-b=3', '-s=7']))).toMatchObject({
      batch: 3,
      seqstartQ: [0, 7, 14, 21],
      seqstartK: [0, 7, 14, 21],
    });
  });

  it('a bad flag exits 2 with a one-line error naming it', async () => {
    for (const [argv, flag] of [
      [['-s=1,2'], '-s=1,2'],
      [['-mode=1', '-s=1,2', '-s_k=1,2,3'], '-s_k'],
      [['-mode=1', '-b=3', '-s=1,2'], '-b=3'],
      [['-d=100'], '-d=100'],
      [['-h=6', '-h_k=4'], '-h_k=4'],
      [['-mask=q'], '-mask=q'],
      [['-iperm=2'], '-iperm=2'],
      [['-num_splits=200'], '-num_splits=200'],
      [['-num_splits=-1'], '-num_splits=-1'],
      [['-repeat=0'], '-repeat=0'],
      [['-prec=fp32'], '-prec=fp32'],
      [['-s=abc'], '-s=abc'],
    ] as const) {
      const { code, stdout, stderr } = await cli([...argv, '-v=0']);
      expect(code, argv.join(' ')).toBe(2);
      expect(stdout, argv.join(' ')).toBe('');
      expect(stderr.trimEnd().split('\n'), argv.join(' ')).toHaveLength(1);
      expect(stderr, argv.join(' ')).toContain(flag);
    }
  });

  it('the sampled CPU reference equals the full one on the sampled rows (group mode, GQA, window mask, bshd)', () => {
    const p = checkFmhaFwdProblem(
      problemFromArgs(
        fmhaFwdParser.parse([
          '-mode=1',
          '-s=1,17,40',
          '-s_k=30,0,64',
          '-h=4',
          '-h_k=2',
          '-d=32',
          '-mask=b:9,2',
          '-iperm=0',
          '-operm=0',
          '-lse=1',
        ]),
      ),
    );
    const e = fmhaFwdOperandElements(p);
    let x = 7;
    const bits = (n: number) =>
      Uint16Array.from({ length: n }, () => encode('fp16', ((x = (x * 48271) % 2147483647) / 2147483647) * 2 - 1));
    const data = { q: bits(e.q), k: bits(e.k), v: bits(e.v) };
    const full = fmhaFwdReferenceCheck(p, data);
    const sampled = fmhaFwdReferenceCheck(p, data, { sample: 3, seed: 1 });
    expect(full.rows).toBe(4 * (1 + 17 + 40));
    expect(sampled.rows).toBe(4 * (1 + 3 + 3));
    const byOffset = new Map<number, number>();
    full.oOffsets.forEach((o, i) => byOffset.set(o, full.oWant[i]!));
    sampled.oOffsets.forEach((o, i) => expect(sampled.oWant[i]).toBeCloseTo(byOffset.get(o)!, 6));
    const lseBy = new Map<number, number>();
    full.lseIndices.forEach((li, i) => lseBy.set(li, full.lseWant[i]!));
    sampled.lseIndices.forEach((li, i) => expect(sampled.lseWant[i]).toBeCloseTo(lseBy.get(li)!, 5));
    // The second sequence has no keys: its rows are O = 0 and LSE = −∞.
    expect(full.lseWant.filter((l) => l === -Infinity).length).toBeGreaterThanOrEqual(4 * 17);
    // And a wrong answer fails the comparison.
    const exact = compareWithReference(
      full,
      (off) => full.oWant[full.oOffsets.indexOf(off)]!,
      (li) => full.lseWant[full.lseIndices.indexOf(li)]!,
    );
    expect(exact.ok).toBe(true);
    const wrong = compareWithReference(full, (off) => full.oWant[full.oOffsets.indexOf(off)]! + 0.05, undefined);
    expect(wrong.ok).toBe(false);
    expect(wrong.message).toMatch(/outside; first: O\[/);
  });

  it.runIf(hasNvcc && !hasGpu)(
    'without a GPU: compiles the split kernel and the combine, prints instances and resources, runs the CPU reference, says no device, exits 0',
    async () => {
      const { code, out } = await run(['-b=1', '-h=2', '-s=16', '-s_k=4097', '-num_splits=0', '-lse=1']);
      expect(code).toBe(0);
      expect(out).toContain('example_fmha_fwd: fp16 batch 1x2h 16x4097 d128/128 bhsd>bhsd lse split');
      expect(out).toMatch(/split-KV heuristic: \d+ split\(s\) for 132 SMs \(no device: an H200 assumed\)/);
      expect(out).toMatch(/instance: fmha_fwd_sm90_fp16_d128_none_128x128_s2_split1 \(key [0-9a-f]+\)/);
      expect(out).toMatch(/combine: +fmha_fwd_combine_sm90_fp16_dv128_m16_t128/);
      expect(out).toMatch(/fmha_fwd_combine_sm90_fp16_dv128_m16_t128 +sm_90a +\d+ +8192 +0 +0\/0 +0/);
      expect(out).toContain('CPU reference (fp64, probabilities not narrowed): all 32 query rows');
      expect(out).toContain('no CUDA device found');
    },
    300_000,
  );

  it.runIf(hasNvcc && !hasGpu)(
    'without a GPU, group mode and a big problem: one kernel, sampled reference',
    async () => {
      const { code, out } = await run(['-mode=1', '-s=1,17,259,4097', '-h=2', '-mask=b', '-prec=bf16']);
      expect(code).toBe(0);
      expect(out).toContain('example_fmha_fwd: bf16 group 4x2h sq[1,17,259,4097] sk[1,17,259,4097] d128/128 bhsd>bhsd mask=b');
      expect(out).toMatch(/instance: fmha_fwd_sm90_bf16_d128_window_128x128_s2_split0/);
      expect(out).not.toContain('combine:');
      expect(out).toMatch(/SAMPLED \d+ query rows/);
      expect(out).toContain('no CUDA device found');
    },
    300_000,
  );

  it.runIf(hasNvcc && !hasGpu)(
    'without a GPU, score modifiers: the soft-capping and ALiBi instances, the reference with the modifier (sampled rows too)',
    async () => {
      const capped = await run(['-b=1', '-h=2', '-s=259', '-softcap=30']);
      expect(capped.code).toBe(0);
      expect(capped.out).toMatch(/, soft-capping 30\n/);
      expect(capped.out).toMatch(/instance: fmha_fwd_sm90_fp16_d128_none_128x128_s2_split0_softcap \(key [0-9a-f]+\)/);
      expect(capped.out).toContain('CPU reference (fp64, probabilities not narrowed): all 518 query rows');
      const alibi = await run(['-mode=1', '-s=17,4097', '-h=4', '-h_k=2', '-mask=b', '-alibi=1', '-num_splits=0']);
      expect(alibi.code).toBe(0);
      expect(alibi.out).toMatch(/instance: fmha_fwd_sm90_fp16_d128_window_128x128_s2_split0_alibi/);
      expect(alibi.out).toMatch(/SAMPLED \d+ query rows/);
      expect((await run(['-alibi=1', '-d=64'])).code).toBe(1);
    },
    300_000,
  );

  it('the sampled reference applies the modifier as the full one does', () => {
    const p = checkFmhaFwdProblem(problemFromArgs(fmhaFwdParser.parse(['-b=1', '-h=2', '-s=40', '-mask=t', '-softcap=0.5'])));
    const elems = fmhaFwdOperandElements(p);
    const fill = (n: number, salt: number) =>
      Uint16Array.from({ length: n }, (_, i) => encode('fp16', Math.round(Math.sin(i * 12.9898 + salt) * 64) / 32));
    const data = { q: fill(elems.q, 1), k: fill(elems.k, 2), v: fill(elems.v, 3) };
    const scoreModifier = { kind: 'softcap' as const, cap: 0.5 };
    const full = fmhaFwdReferenceCheck(p, data, { scoreModifier });
    const sampled = fmhaFwdReferenceCheck(p, data, { sample: 40, seed: 3, scoreModifier });
    const plain = fmhaFwdReferenceCheck(p, data, { sample: 40, seed: 3 });
    sampled.oOffsets.forEach((off, i) => expect(sampled.oWant[i]).toBeCloseTo(full.oWant[full.oOffsets.indexOf(off)]!, 5));
    expect(sampled.oWant.some((w, i) => Math.abs(w - plain.oWant[i]!) > 1e-3)).toBe(true);
  });
});
