import { runCli } from '@tilekit/host';
import { ffpaClusterCtas } from '@tilekit/kernel-ffpa';
import { NvccCompiler, probe } from '@tilekit/runtime';
import { describe, expect, it } from 'vitest';
import { logFfpaBwdPlan } from './ffpaBwdExample.ts';
import { bwdPlanFromArgs, ffpaParser, logPlan, planFromArgs, problemFromArgs, runFfpaExample } from './ffpaExample.ts';

const hasNvcc = NvccCompiler.available();
const hasGpu = probe().deviceCount > 0;
if (!hasNvcc)
  console.warn('\n!!! SKIPPING the example_ffpa run: nvcc not found (set TILEKIT_NVCC). The kernels are NOT being compiled. !!!\n');

async function run(argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runFfpaExample(ffpaParser.parse(argv), (l) => lines.push(l));
  return { code, out: lines.join('\n') };
}

async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(ffpaParser, argv, (args) => runFfpaExample(args, (l) => (stdout += `${l}\n`)), {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    exit: () => undefined,
  });
  return { code, stdout, stderr };
}

describe('example_ffpa', () => {
  it("-? lists CK-tile's flags with FFPA's defaults and -bwd, and runs nothing", async () => {
    const { code, stdout, stderr } = await cli(['-?']);
    expect([code, stderr]).toEqual([0, '']);
    const keys = [
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
      'path',
      'lse',
      'bwd',
      'deterministic',
      'v',
      'seed',
      'warmup',
      'repeat',
    ];
    expect(ffpaParser.flags().map((f) => f.key)).toEqual(keys);
    for (const f of ffpaParser.flags()) expect(stdout, `-${f.key}`).toMatch(new RegExp(`^-${f.key} `, 'm'));
    for (const [flag, value] of [
      ['b', '1'],
      ['h', '8'],
      ['s', '1024'],
      ['d', '512'],
      ['prec', 'bf16'],
    ])
      expect(stdout, `-${flag}`).toMatch(new RegExp(`^-${flag} +\\S+(?: \\S+)* {2,}${value} {2,}`, 'm'));
    expect(stdout).toMatch(/^-bwd +bool +false +run the backward dQ, dK, dV instead \(O and LSE from the -path forward; implies -lse/m);
    expect(stdout.split('\n')[0]).toMatch(
      /^example_ffpa: FFPA attention for large head dims: forward .* or, with -bwd, its backward dQ, dK, dV/,
    );
    expect(stdout.trimEnd().split('\n').at(-1)).toMatch(/^-\? +print this help and exit/);
    expect(stdout).not.toContain('not built yet');
    expect(stdout).not.toContain('example_ffpa: bf16');
  });

  it('maps flags to a problem: defaults, layouts, GQA, 576/512, group-mode lists', () => {
    expect(problemFromArgs(ffpaParser.parse([]))).toEqual({
      dtype: 'bf16',
      batch: 1,
      nheadQ: 8,
      hdimQ: 512,
      inputLayout: 'bhsd',
      outputLayout: 'bhsd',
      mask: '0',
      lse: false,
      seqlenQ: 1024,
      seqlenK: 1024,
    });
    const argv = ['-b=2', '-h=8', '-h_k=2', '-s=100', '-s_k=300', '-d=576', '-d_v=512', '-iperm=0', '-mask=b', '-lse=1', '-scale_s=0.5'];
    expect(problemFromArgs(ffpaParser.parse([...argv, '-prec=fp16']))).toEqual({
      dtype: 'fp16',
      batch: 2,
      nheadQ: 8,
      nheadK: 2,
      hdimQ: 576,
      hdimV: 512,
      inputLayout: 'bshd',
      outputLayout: 'bhsd',
      mask: 'b',
      lse: true,
      scale: 0.5,
      seqlenQ: 100,
      seqlenK: 300,
    });
    expect(problemFromArgs(ffpaParser.parse(['-mode=1', '-s=1,17,0', '-s_k=5']))).toMatchObject({
      batch: 3,
      seqstartQ: [0, 1, 18, 18],
      seqstartK: [0, 5, 10, 15],
    });
  });

  it('plans the column slices: one up to 512 columns, then several CTAs (576/576: 320 + 256, 1024: 2 × 512)', () => {
    const slices = (argv: string[]) => planFromArgs(ffpaParser.parse(argv)).slices.map((s) => [s.offset, s.width, s.instance.name]);
    expect(slices(['-d=576', '-d_v=512'])).toEqual([[0, 512, expect.stringMatching(/^ffpa_fwd_sm90_bf16_d576x512_none_/)]]);
    expect(slices(['-d=576', '-mask=t', '-prec=fp16'])).toEqual([
      [0, 320, expect.stringMatching(/^ffpa_fwd_sm90_fp16_d576x320_window_/)],
      [320, 256, expect.stringMatching(/^ffpa_fwd_sm90_fp16_d576x256_window_/)],
    ]);
    const d1024 = planFromArgs(ffpaParser.parse(['-d=1024']));
    expect(d1024.description).toBe('d1024 dv1024: 2 CTAs per 64 query rows, O columns [0,512) [512,1024), S recomputed in each');
    expect(new Set(d1024.slices.map((s) => s.instance)).size).toBe(1);
  });

  it('-path=sm80 plans FFPA L1’s sm_80 instances in slices of at most 256 columns', () => {
    const plan = planFromArgs(ffpaParser.parse(['-d=576', '-d_v=512', '-path=sm80', '-mask=b']));
    expect(plan.description).toBe('d576 dv512 (sm_80 path): 2 CTAs per 64 query rows, O columns [0,256) [256,512), S recomputed in each');
    expect(plan.slices.map((s) => s.instance.name)).toEqual([
      expect.stringMatching(/^ffpa_fwd_sm80_bf16_d576x256_window_/),
      expect.stringMatching(/^ffpa_fwd_sm80_bf16_d576x256_window_/),
    ]);
    const lines: string[] = [];
    logPlan(plan, (line) => lines.push(line));
    expect(lines.find((l) => l.startsWith('slice [256,512): '))).toMatch(
      /tile 64x64, 128 threads; grid \[\d+, \d+, 1\], \d+ B dynamic smem$/,
    );
  });

  it('plans d 768 as a cluster of two CTAs and prints the clusters of its launch', async () => {
    const plan = planFromArgs(ffpaParser.parse(['-d=768', '-h=2']));
    expect(plan.slices.map((s) => [s.offset, s.width, ffpaClusterCtas(s.instance)])).toEqual([[0, 768, 2]]);
    expect(plan.description).toMatch(/^d768 dv768: a cluster of 2 CTAs per 64 query rows/);
    const lines: string[] = [];
    logPlan(plan, (line) => lines.push(line));
    expect(lines.find((l) => l.startsWith('slice [0,768): '))).toMatch(/grid \[\d+, 4, 1\] in clusters of \[1, 2, 1\]/);
  });

  it('-bwd plans the three backward instances (d576/512, d1024) and the forward with LSE that gives them O and LSE', () => {
    const names = (argv: string[]) => {
      const plan = bwdPlanFromArgs(ffpaParser.parse(['-bwd=1', ...argv]));
      const k = plan.kernels;
      return { lse: plan.forward.problem.lse, names: [k.dotDoO.name, k.dqDkDv.name, k.convertDq.name] };
    };
    expect(names(['-d=576', '-d_v=512'])).toEqual({
      lse: true,
      names: [
        expect.stringMatching(/^fmha_bwd_dot_do_o_sm90_bf16_dv512_/),
        expect.stringMatching(/^ffpa_bwd_sm90_bf16_d576x512_none_/),
        expect.stringMatching(/^fmha_bwd_convert_dq_sm90_bf16_d576_/),
      ],
    });
    expect(names(['-d=1024', '-mask=t', '-prec=fp16']).names).toEqual([
      expect.stringMatching(/^fmha_bwd_dot_do_o_sm90_fp16_dv1024_/),
      expect.stringMatching(/^ffpa_bwd_sm90_fp16_d1024_window_/),
      expect.stringMatching(/^fmha_bwd_convert_dq_sm90_fp16_d1024_/),
    ]);
    const plan = bwdPlanFromArgs(ffpaParser.parse(['-bwd=1', '-d=1024', '-h=2', '-s=17']));
    expect(plan.problem).toMatchObject({ hdimQ: 1024, hdimV: 1024, nheadQ: 2, seqlenQ: 17, deterministic: false });
    const lines: string[] = [];
    logFfpaBwdPlan('example_ffpa', plan, (l) => lines.push(l));
    expect(lines[0]).toBe('example_ffpa -bwd: bf16 batch 1x2h 17x17 d1024/1024 bhsd>bhsd atomic dQ, scale 0.03125');
    expect(lines[1]).toMatch(/^forward for O and LSE: d1024 dv1024: 2 CTAs per 64 query rows, .*\(ffpa_fwd_sm90_bf16_d1024x512_none_/);
    expect(lines.slice(2).map((l) => l.split(':')[0])).toEqual(['dot_do_o', 'dq_dk_dv', 'convert_dq']);
    expect(lines[3]).toMatch(
      new RegExp(
        String.raw`^dq_dk_dv: ffpa_bwd_sm90_bf16_d1024_none_\w+ \(key [0-9a-f]+\), tile 64x64, 384 threads; grid \[4, 2, 1\] ` +
          String.raw`\(clusters of 4 CTAs, 4 column slice\(s\)\); dQ by TMA bulk reductions, \d+ B dynamic smem; sm90 path$`,
      ),
    );
  });

  it('-bwd honours -path: sm90 by default (every FFPA head-dim pair), sm80 when asked', () => {
    const dqDkDv = (argv: string[]) => {
      const plan = bwdPlanFromArgs(ffpaParser.parse(['-bwd=1', ...argv]));
      return [plan.kernels.path, plan.kernels.dqDkDv.name];
    };
    expect(dqDkDv(['-d=512'])).toEqual(['sm90', 'ffpa_bwd_sm90_bf16_d512_none_64x64_w256_s2_sm_90a']);
    expect(dqDkDv(['-d=320', '-mask=t', '-path=sm90'])).toEqual(['sm90', 'ffpa_bwd_sm90_bf16_d320_window_64x64_w256_s2_sm_90a']);
    expect(dqDkDv(['-d=512', '-path=sm80'])).toEqual(['sm80', 'ffpa_bwd_sm80_bf16_d512_none_64x64_w128_s2_sm_90a']);
    expect(dqDkDv(['-d=1024'])[0]).toBe('sm90');
    expect(dqDkDv(['-d=1024', '-path=sm80'])).toEqual(['sm80', 'ffpa_bwd_sm80_bf16_d1024_none_64x64_w128_s2_sm_90a']);
    const plan = bwdPlanFromArgs(ffpaParser.parse(['-bwd=1', '-d=512', '-h=2', '-s=17']));
    const lines: string[] = [];
    logFfpaBwdPlan('example_ffpa', plan, (l) => lines.push(l));
    expect(lines[3]).toMatch(
      /^dq_dk_dv: ffpa_bwd_sm90_bf16_d512_none_\w+ \(key [0-9a-f]+\), tile 64x64, 384 threads; grid \[2, 2, 1\] .* sm90 path$/,
    );
  });

  it('-bwd -deterministic=1: the key-ordered sm90 instance, and the plan says so; with -path=sm80 one line naming the flag, exit 2', async () => {
    const plan = bwdPlanFromArgs(ffpaParser.parse(['-bwd=1', '-d=1024', '-h=2', '-s=17', '-deterministic=1']));
    expect([plan.problem.deterministic, plan.kernels.path, plan.kernels.dqDkDv.name]).toEqual([
      true,
      'sm90',
      'ffpa_bwd_sm90_bf16_d1024_none_64x64_w256_s2_dqord_sm_90a',
    ]);
    const lines: string[] = [];
    logFfpaBwdPlan('example_ffpa', plan, (l) => lines.push(l));
    expect(lines[0]).toContain(' deterministic,');
    expect(lines[3]).toMatch(/dQ by TMA bulk reductions in key order \(deterministic\), /);
    const { code, stdout, stderr } = await cli(['-bwd=1', '-deterministic=1', '-path=sm80']);
    expect([code, stdout, stderr.trimEnd()]).toEqual([
      2,
      '',
      'error: -deterministic=1 needs -path=sm90 (the sm_80 backward adds dQ with atomics)',
    ]);
  });

  it('a problem the backward cannot run: the one-line flag error the forward gives, exit 2, nothing logged', async () => {
    for (const [argv, message] of [
      [['-d=128'], /^error: -d=128: must be one of 320, 384, /],
      [['-d=576', '-d_v=256'], /^error: -d_v=256: must be 576 or 512 with hdimQ = 576$/],
      [['-mask=g:3,4'], /^error: -mask=g:3,4: must be a window mask or none/],
      [['-h=6', '-h_k=4'], /^error: -h_k=4: must divide nheadQ = 6/],
      [['-s=0'], /^error: -s=0: the problem needs at least one query row$/],
    ] as const) {
      const { code, stdout, stderr } = await cli(['-bwd=1', ...argv]);
      expect([code, stdout, stderr.split('\n').length], argv.join(' ')).toEqual([2, '', 2]);
      expect(stderr.trimEnd(), argv.join(' ')).toMatch(message);
    }
  });

  it.runIf(hasNvcc && !hasGpu)(
    'without a GPU, -bwd: compiles the three instances, prints them and their resources, runs the CPU reference, says no device, exits 0',
    async () => {
      const { code, out } = await run(['-bwd=1', '-d=320', '-s=17', '-b=1', '-h=1', '-v=1', '-path=sm80']);
      expect(code).toBe(0);
      expect(out).toContain('example_ffpa -bwd: bf16 batch 1x1h 17x17 d320/320 bhsd>bhsd atomic dQ, scale ');
      const names = [
        'fmha_bwd_dot_do_o_sm90_bf16_dv320_\\w+',
        'ffpa_bwd_sm80_bf16_d320_none_\\w+',
        'fmha_bwd_convert_dq_sm90_bf16_d320_\\w+',
      ];
      for (const [stage, name] of [
        ['dot_do_o', names[0]],
        ['dq_dk_dv', names[1]],
        ['convert_dq', names[2]],
      ])
        expect(out).toMatch(new RegExp(`^${stage}: ${name} `, 'm'));
      // Each compiled once: registers, no static smem, its dynamic smem, no spills, no stack.
      for (const name of names) expect(out.match(new RegExp(`^${name} +sm_90a +\\d+ +0 +\\d+ +0/0 +0 `, 'gm')), name).toHaveLength(1);
      expect(out).toMatch(
        /^CPU reference \(fp64; forward O rounded to bf16, LSE fp32\): [\d.]+ ms; max \|dQ\| \S+, \|dK\| \S+, \|dV\| \S+; tolerance /m,
      );
      expect(out.split('\n').at(-1)).toMatch(
        /^no CUDA device found \(.*\): the backward kernels were generated and compiled and the CPU reference computed; nothing ran on a GPU\.$/,
      );
    },
    600_000,
  );

  it.runIf(hasNvcc && !hasGpu)(
    'without a GPU: compiles the slice kernel, prints the plan, instances and resources, runs the CPU reference, says no device, exits 0',
    async () => {
      const { code, out } = await run(['-d=1024', '-s=17', '-h=2', '-v=1']);
      expect(code).toBe(0);
      expect(out).toContain('example_ffpa: bf16 batch 1x2h 17x17 d1024/1024 bhsd>bhsd, scale 0.03125');
      expect(out).toContain('plan: d1024 dv1024: 2 CTAs per 64 query rows, O columns [0,512) [512,1024), S recomputed in each');
      const instance = 'ffpa_fwd_sm90_bf16_d1024x512_none_64x64_\\w+';
      expect(out).toMatch(
        new RegExp(`^slice \\[0,512\\): ${instance} \\(key [0-9a-f]+\\), tile 64x64, \\d+ threads; grid \\[1, 2, 1\\]`, 'm'),
      );
      expect(out).toMatch(new RegExp(`^slice \\[512,1024\\): ${instance} \\(key [0-9a-f]+\\)`, 'm'));
      // One compiled kernel (both slices share it): registers, no static smem, its dynamic smem, no spills, no stack.
      expect(out.match(new RegExp(`^${instance} +sm_90a +\\d+ +0 +\\d+ +0/0 +0 `, 'gm'))).toHaveLength(1);
      expect(out).toMatch(/^CPU reference \(fp32 or better, probabilities not narrowed\): all 34 query rows in [\d.]+ ms/m);
      expect(out.split('\n').at(-1)).toMatch(
        /^no CUDA device found \(.*\): the kernel\(s\) were generated and compiled and the CPU reference computed/,
      );
    },
    600_000,
  );
});
