import { fillTensor, HostTensor, runCli } from '@tilekit/host';
import { checkGemmProblem, findGfx942Clang } from '@tilekit/kernel-gemm';
import { NvccCompiler, probe } from '@tilekit/runtime';
import { describe, expect, it } from 'vitest';
import { decode, encode } from '@tilekit/numeric';
import { gemmParser, gemmReferenceCheck, layoutFromFlags, pickInstance, problemFromArgs, runGemmExample } from './gemmExample.ts';

const hasNvcc = NvccCompiler.available();
const hasGpu = probe().deviceCount > 0;
const hasClang = findGfx942Clang() !== undefined;
if (!hasClang) console.warn('\n!!! SKIPPING the example_gemm -arch=gfx942 run: clang-19 not found (set TILEKIT_CLANG). !!!\n');
if (!hasNvcc) console.warn('\n!!! SKIPPING the example_gemm run: nvcc not found (set TILEKIT_NVCC). !!!\n');

async function run(argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runGemmExample(gemmParser.parse(argv), (l) => lines.push(l));
  return { code, out: lines.join('\n') };
}

/** runCli with captured streams: what a shell would see. */
async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(gemmParser, argv, (args) => runGemmExample(args, (l) => (stdout += `${l}\n`)), {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    exit: () => undefined,
  });
  return { code, stdout, stderr };
}

describe('example_gemm', () => {
  it('-? lists every flag with its default, and runs nothing', async () => {
    const { code, stdout, stderr } = await cli(['-?']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    const flags = gemmParser.flags().map((f) => f.key);
    expect(flags).toEqual([
      'm',
      'n',
      'k',
      'b',
      'stride_a',
      'stride_b',
      'stride_c',
      'a_layout',
      'b_layout',
      'prec',
      'v',
      'warmup',
      'repeat',
      'seed',
      'init',
      'instance',
      'arch',
      'compiler',
    ]);
    for (const f of gemmParser.flags()) {
      const shown = f.defaultValue === '' ? '""' : String(f.defaultValue);
      const line = stdout.split('\n').find((l) => l.startsWith(`-${f.key} `));
      expect(line, `-${f.key}`).toBeDefined();
      expect(line!.split(/ {2,}/), `-${f.key}`).toContain(shown);
    }
    expect(stdout).toContain('-a_layout  R|C');
    expect(stdout).toMatch(/-arch +device\|sm90a\|sm80\|gfx942 +device /);
    expect(stdout).not.toContain('example_gemm: fp16');
  });

  it('a bad flag exits 2 with a one-line error naming it', async () => {
    for (const [argv, flag] of [
      [['-mm=3'], '-mm'],
      [['-m=abc'], '-m=abc'],
      [['-prec=fp32'], '-prec=fp32'],
      [['-k=64', '-stride_a=8'], '-stride_a=8'],
      [['-stride_c=-1'], '-stride_c=-1'],
      [['-m=0'], '-m=0'],
      [['-repeat=0'], '-repeat=0'],
      [['-instance=nope'], '-instance=nope'],
      [['-arch=sm70'], '-arch=sm70'],
      [['-arch=sm90a', '-instance=gemm_sm80_mma_fp16_tn_128x128x32_w2x4_s4_v1_sm_80'], '-instance='],
    ] as const) {
      const { code, stdout, stderr } = await cli([...argv]);
      expect(code, argv.join(' ')).toBe(2);
      expect(stdout).toBe('');
      expect(stderr.trimEnd().split('\n'), argv.join(' ')).toHaveLength(1);
      expect(stderr).toContain(flag);
    }
  });

  it('maps CK-style flags to a problem and a layout name', () => {
    expect(problemFromArgs(gemmParser.parse(['-m=7', '-n=9', '-k=64', '-b=2', '-stride_a=72', '-stride_c=16', '-prec=bf16']))).toEqual({
      dtype: 'bf16',
      m: 7,
      n: 9,
      k: 64,
      batch: 2,
      layout: 'tn',
      lda: 72,
      ldc: 16,
    });
    expect(problemFromArgs(gemmParser.parse([]))).toEqual({ dtype: 'fp16', m: 3840, n: 4096, k: 2048, batch: 1, layout: 'tn' });
    expect(problemFromArgs(gemmParser.parse(['-a_layout=C', '-b_layout=R', '-stride_a=136']))).toMatchObject({ layout: 'nt', lda: 136 });
    expect([layoutFromFlags('R', 'C'), layoutFromFlags('C', 'C'), layoutFromFlags('R', 'R'), layoutFromFlags('C', 'R')]).toEqual([
      'tn',
      'nn',
      'tt',
      'nt',
    ]);
  });

  it('every -a_layout/-b_layout pair dispatches to its own instance; problems no instance runs get the dispatcher error, exit 1, before compiling', async () => {
    for (const [a, b, name] of [
      ['R', 'C', 'tn'],
      ['C', 'C', 'nn'],
      ['R', 'R', 'tt'],
      ['C', 'R', 'nt'],
    ] as const) {
      const { instance, problem } = pickInstance(gemmParser.parse([`-a_layout=${a}`, `-b_layout=${b}`, '-m=4096', '-n=4096', '-k=512']));
      expect([instance.name, problem.layout]).toEqual([`gemm_sm90_ws_fp16_${name}_128x256x64_s4_v2`, name]);
      // Odd N: only tn has scalar C stores; the others say why and exit 1.
      if (name === 'tn') continue;
      const odd = await run([`-a_layout=${a}`, `-b_layout=${b}`, '-m=128', '-n=255', '-k=64', ...(b === 'R' ? ['-stride_b=256'] : [])]);
      expect(odd.code).toBe(1);
      expect(odd.out).toContain(`no gemm instance runs fp16 ${name} 128x255x64`);
      expect(odd.out).toContain(`gemm_sm90_ws_fp16_${name}_128x256x64_s4_v2: n = 255 is not a multiple of the 2-element C store`);
      expect(odd.out).not.toContain('registers');
    }
    // Column-major A: its leading dimension is checked against M (the flag named), and TMA's 16-byte rule.
    const { code, stderr } = await cli(['-a_layout=C', '-m=100', '-stride_a=64']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/-stride_a=64: .*must be at least m = 100 \(A is column-major/);
    const ragged = await run(['-k=60']);
    expect(ragged.code).toBe(1);
    expect(ragged.out).toMatch(/lda · 2 = 120 bytes is not a multiple of 16/);
    const named = await run(['-instance=gemm_sm90_ws_bf16_tn_128x128x64_s4_v2', '-m=128', '-n=128', '-k=64']);
    expect(named.code).toBe(1);
    expect(named.out).toContain('dtype fp16: this kernel computes bf16');
    const otherLayout = await run(['-instance=gemm_sm90_ws_fp16_nn_128x128x64_s4_v2', '-m=128', '-n=128', '-k=64']);
    expect(otherLayout.code).toBe(1);
    expect(otherLayout.out).toContain('layout tn: this kernel reads nn');
  });

  it('-arch: the device decides by default (sm90a without a GPU); sm80 picks the sm_80 family built for the device; -instance takes sm_80 names', () => {
    const parse = (...argv: string[]) => gemmParser.parse(['-m=1000', '-n=777', '-k=512', ...argv]);
    expect(pickInstance(parse()).instance.name).toBe('gemm_sm90_ws_fp16_tn_128x128x64_s4_v1');
    expect(pickInstance(parse(), 'sm_90a').instance.name).toBe('gemm_sm90_ws_fp16_tn_128x128x64_s4_v1');
    expect(pickInstance(parse('-arch=sm80')).instance.name).toBe('gemm_sm80_mma_fp16_tn_128x128x32_w2x4_s4_v1_sm_80');
    expect(pickInstance(parse('-arch=sm80'), 'sm_90a').instance.name).toBe('gemm_sm80_mma_fp16_tn_128x128x32_w2x4_s4_v1_sm_90a');
    expect(pickInstance(parse(), 'sm_80').instance.name).toBe('gemm_sm80_mma_fp16_tn_128x128x32_w2x4_s4_v1_sm_80');
    expect(pickInstance(parse('-a_layout=C', '-prec=bf16', '-stride_a=1000'), 'sm_80').instance.name).toBe(
      'gemm_sm80_mma_bf16_nn_128x128x32_w2x4_s4_v1_sm_80',
    );
    const named = 'gemm_sm80_mma_fp16_tn_128x128x32_w2x4_s4_v1_sm_90a';
    expect(pickInstance(parse(`-instance=${named}`), 'sm_90a').instance.name).toBe(named);
    expect(pickInstance(parse(`-instance=${named}`, '-arch=sm80')).instance.name).toBe(named);
    expect(() => pickInstance(parse(`-instance=${named}`), 'sm_80')).toThrow(/built for sm_90a, this GPU is sm_80/);
    expect(() => pickInstance(parse('-instance=gemm_sm80_mma_fp16_tn_128x128x32_w2x4_s4_v1_sm_80'), 'sm_90a')).toThrow(
      /the sm_90a build ends _sm_90a/,
    );
    expect(() => pickInstance(parse('-arch=sm90a'), 'sm_80')).toThrow(
      expect.objectContaining({ argument: '-arch', message: expect.stringMatching(/only on an sm_90a device/) }),
    );
    expect(() => pickInstance(parse(), 'sm_86')).toThrow(expect.objectContaining({ argument: '-arch' }));
    // The sm_80 family's own predicates: leading dimensions in 16-byte rows, its own layouts.
    expect(() => pickInstance(parse('-arch=sm80', '-k=77'))).toThrow(/lda = 77 is not a multiple of 8/);
    expect(() => pickInstance(parse('-arch=sm80', '-b_layout=R'))).toThrow(/no gemm instance runs fp16 tt/);
  });

  it.each(['nn', 'nt', 'tt'] as const)(
    'layout %s: the sampled CPU reference equals the full one at the sampled elements (ragged, strided, batched)',
    (layout) => {
      const [a, b] = [layout[0] === 't' ? 'R' : 'C', layout[1] === 'n' ? 'C' : 'R'] as const;
      const p = checkGemmProblem({
        ...problemFromArgs(gemmParser.parse([`-a_layout=${a}`, `-b_layout=${b}`, '-m=37', '-n=29', '-k=72', '-b=2', '-prec=bf16'])),
        lda: a === 'R' ? 80 : 40,
        ldb: b === 'C' ? 88 : 32,
        ldc: 33,
      });
      const ta = fillTensor(HostTensor.empty('bf16', [2 * p.batchStrideA]), 'uf:-1,1', 1);
      const tb = fillTensor(HostTensor.empty('bf16', [2 * p.batchStrideB]), 'uf:-1,1', 2);
      const full = gemmReferenceCheck(p, ta, tb);
      const byOffset = new Map<number, number>();
      full.offsets.forEach((o, i) => byOffset.set(o, full.want[i]!));
      const sampled = gemmReferenceCheck(p, ta, tb, { sample: 100, seed: 5 });
      sampled.offsets.forEach((o, i) => expect(sampled.want[i], `offset ${o}`).toBe(byOffset.get(o)));
      // And the full reference reads A and B through their layouts: C(0, 0) is row 0 of A · column 0 of B.
      let dot = 0;
      for (let q = 0; q < p.k; q++) dot = Math.fround(dot + ta.at(a === 'R' ? q : q * p.lda) * tb.at(b === 'C' ? q : q * p.ldb));
      expect(byOffset.get(0)).toBe(decode('bf16', encode('bf16', dot)));
    },
  );

  it('the sampled CPU reference equals the full one at the sampled elements (ragged, strided, batched)', () => {
    const p = checkGemmProblem({ dtype: 'bf16', m: 37, n: 29, k: 72, lda: 80, ldb: 88, ldc: 33, batch: 2 });
    const a = fillTensor(HostTensor.empty('bf16', [2 * p.batchStrideA]), 'uf:-1,1', 1);
    const b = fillTensor(HostTensor.empty('bf16', [2 * p.batchStrideB]), 'uf:-1,1', 2);
    const full = gemmReferenceCheck(p, a, b);
    expect(full.sampled).toBe(false);
    expect(full.offsets.length).toBe(2 * 37 * 29);
    const byOffset = new Map<number, number>();
    full.offsets.forEach((o, i) => byOffset.set(o, full.want[i]!));
    const sampled = gemmReferenceCheck(p, a, b, { sample: 100, seed: 5 });
    expect(sampled.sampled).toBe(true);
    expect(sampled.offsets.length).toBe(2 * 8 * 8); // matrices 0 and 1, 8 rows × 8 columns each (⌈√(100 / 2)⌉)
    expect([...sampled.offsets]).toContain(1 * p.batchStrideC + 36 * p.ldc + 28); // the last corner
    sampled.offsets.forEach((o, i) => expect(sampled.want[i], `offset ${o}`).toBe(byOffset.get(o)));
    expect(sampled.rtol).toBe(full.rtol);
  });

  it.runIf(hasNvcc && !hasGpu)(
    'without a GPU: generates and compiles the kernel, prints instance, resources and launch, runs the CPU reference, says no device, exits 0',
    async () => {
      const { code, out } = await run(['-m=128', '-n=256', '-k=64', '-v=1']);
      expect(code).toBe(0);
      expect(out).toContain('example_gemm: fp16 tn 128x256x64');
      expect(out).toMatch(/instance: gemm_sm90_ws_fp16_tn_128x128x64_s4_v2 \(key [0-9a-f]+\)/);
      expect(out).toContain('launch: grid [2, 1, 1], block [384, 1, 1], 132160 B dynamic shared memory');
      expect(out).toMatch(/sm_90a +168 +0 +132160 +0\/0 +0/); // registers, static / dynamic smem, no spills, no stack
      expect(out).toContain('CPU reference: all 32768 C elements');
      expect(out).toContain('no CUDA device found');
      expect(out).toContain('the CPU reference computed');
    },
    120_000,
  );

  it.runIf(hasNvcc && !hasGpu)(
    'without a GPU, -arch=sm80: generates and compiles the sm_80 kernel (for sm_80), prints it, exits 0',
    async () => {
      const { code, out } = await run(['-arch=sm80', '-m=128', '-n=256', '-k=64', '-v=1']);
      expect(code).toBe(0);
      expect(out).toMatch(
        new RegExp(
          /instance: gemm_sm80_mma_fp16_tn_128x128x32_w2x4_s4_v1_sm_80 \(key [0-9a-f]+\), tile 128x128x32, /.source +
            /4 stages, 256 threads \(2x4 warps, cp.async \+ mma.sync\), 1-element C stores/.source,
        ),
      );
      expect(out).toContain('launch: grid [2, 1, 1], block [256, 1, 1], 66560 B dynamic shared memory');
      expect(out).toMatch(/sm_80 +\d+ +0 +66560 +0\/0 +0/); // no spills, no stack
      expect(out).toContain('CPU reference: all 32768 C elements');
      expect(out).toContain('no CUDA device found');
    },
    120_000,
  );

  it.runIf(hasNvcc && !hasGpu)(
    'without a GPU, big problem: samples the CPU reference and says so',
    async () => {
      const { code, out } = await run(['-m=2048', '-n=2048', '-k=512', '-prec=bf16']);
      expect(code).toBe(0);
      expect(out).toMatch(
        /CPU reference: SAMPLED 4096 of 4194304 C elements \(a grid of rows × columns incl\. the first and last; m·n·k·b = 2\^31\.0 > 2\^30/,
      );
      expect(out).toContain('no CUDA device found');
    },
    120_000,
  );

  it.runIf(hasClang)(
    '-arch=gfx942: the MI300 instance emitted as HIP, compiled by clang-19, its resources, the CPU reference, no AMD device; exit 0',
    async () => {
      const { code, out } = await run(['-arch=gfx942', '-m=256', '-n=192', '-k=128', '-prec=bf16']);
      expect(code).toBe(0);
      expect(out).toContain('example_gemm: bf16 tn 256x192x128 on gfx942');
      expect(out).toMatch(/^instance: gemm_gfx942_bf16_tn_\w+ \(key [0-9a-f]+\), tile \d+x\d+x\d+, 256 threads \(wave64\), \d+ B LDS$/m);
      // One row of resources: no spills, no scratch, 1 to 8 waves per SIMD.
      expect(out).toMatch(/^clang-19 +gfx942 +\d+ \+ \d+ = \d+ +\d+ +0\/0 +0 +\d+ +[1-8]$/m);
      expect(out).toMatch(/^CPU reference: all 49152 C elements/m);
      expect(out.split('\n').at(-1)).toMatch(/^no AMD device: the gfx942 kernel was generated and compiled and the CPU reference computed/);
    },
    120_000,
  );

  it("-arch=gfx942: a layout no gfx942 instance runs gets every instance's reasons, exit 1; -instance is refused", async () => {
    if (hasClang) {
      const { code, out } = await run(['-arch=gfx942', '-a_layout=C', '-m=256', '-n=256', '-k=64']);
      expect(code).toBe(1);
      expect(out).toMatch(/^no gemm instance runs/m);
      expect(out).toMatch(/gemm_gfx942_fp16_tn_\w+: .*layout/);
    }
    const named = await cli(['-arch=gfx942', '-instance=gemm_sm90a_fp16_tn_128x256x64_w2x1_s4_p']);
    expect(named.code).toBe(2);
    expect(named.stderr).toMatch(/-instance/);
  });
});
