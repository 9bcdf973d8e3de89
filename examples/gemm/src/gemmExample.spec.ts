import { fillTensor, HostTensor, runCli } from '@tilekit/host';
import { checkGemmProblem } from '@tilekit/kernel-gemm';
import { NvccCompiler, probe } from '@tilekit/runtime';
import { describe, expect, it } from 'vitest';
import { gemmParser, gemmReferenceCheck, layoutFromFlags, problemFromArgs, runGemmExample } from './gemmExample.ts';

const hasNvcc = NvccCompiler.available();
const hasGpu = probe().deviceCount > 0;
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
    expect(flags).toEqual(['m', 'n', 'k', 'b', 'stride_a', 'stride_b', 'stride_c', 'a_layout', 'b_layout', 'prec', 'v', 'warmup', 'repeat', 'seed', 'init', 'instance', 'compiler']);
    for (const f of gemmParser.flags()) {
      const shown = f.defaultValue === '' ? '""' : String(f.defaultValue);
      const line = stdout.split('\n').find((l) => l.startsWith(`-${f.key} `));
      expect(line, `-${f.key}`).toBeDefined();
      expect(line!.split(/ {2,}/), `-${f.key}`).toContain(shown);
    }
    expect(stdout).toContain('-a_layout  R|C');
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
    ] as const) {
      const { code, stdout, stderr } = await cli([...argv]);
      expect(code, argv.join(' ')).toBe(2);
      expect(stdout).toBe('');
      expect(stderr.trimEnd().split('\n'), argv.join(' ')).toHaveLength(1);
      expect(stderr).toContain(flag);
    }
  });

  it('maps CK-style flags to a problem and a layout name', () => {
    expect(problemFromArgs(gemmParser.parse(['-m=7', '-n=9', '-k=64', '-b=2', '-stride_a=72', '-stride_c=16', '-prec=bf16']))).toEqual({ dtype: 'bf16', m: 7, n: 9, k: 64, batch: 2, lda: 72, ldc: 16 });
    expect(problemFromArgs(gemmParser.parse([]))).toEqual({ dtype: 'fp16', m: 3840, n: 4096, k: 2048, batch: 1 });
    expect([layoutFromFlags('R', 'C'), layoutFromFlags('C', 'C'), layoutFromFlags('R', 'R'), layoutFromFlags('C', 'R')]).toEqual(['tn', 'nn', 'tt', 'nt']);
  });

  it('rejects layouts without kernels (and problems no instance runs) with the dispatcher error, exit 1, before compiling', async () => {
    for (const [a, b, name] of [
      ['C', 'C', 'nn'],
      ['R', 'R', 'tt'],
      ['C', 'R', 'nt'],
    ] as const) {
      const { code, out } = await run([`-a_layout=${a}`, `-b_layout=${b}`, '-m=128', '-n=256', '-k=64']);
      expect(code).toBe(1);
      expect(out).toContain(`is layout ${name}; kernels/gemm implements only tn`);
      expect(out).toContain(`no gemm instance runs fp16 ${name} 128x256x64`);
      expect(out).toContain(`gemm_sm90_ws_fp16_tn_128x256x64_s4_v2: layout ${name}: this kernel reads tn`);
      expect(out).not.toContain('registers');
    }
    const ragged = await run(['-k=60']);
    expect(ragged.code).toBe(1);
    expect(ragged.out).toMatch(/lda · 2 = 120 bytes is not a multiple of 16/);
    const named = await run(['-instance=gemm_sm90_ws_bf16_tn_128x128x64_s4_v2', '-m=128', '-n=128', '-k=64']);
    expect(named.code).toBe(1);
    expect(named.out).toContain('dtype fp16: this kernel computes bf16');
  });

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

  it.runIf(hasNvcc && !hasGpu)('without a GPU: generates and compiles the kernel, prints instance, resources and launch, runs the CPU reference, says no device, exits 0', async () => {
    const { code, out } = await run(['-m=128', '-n=256', '-k=64', '-v=1']);
    expect(code).toBe(0);
    expect(out).toContain('example_gemm: fp16 tn 128x256x64');
    expect(out).toMatch(/instance: gemm_sm90_ws_fp16_tn_128x128x64_s4_v2 \(key [0-9a-f]+\)/);
    expect(out).toContain('launch: grid [2, 1, 1], block [384, 1, 1], 132160 B dynamic shared memory');
    expect(out).toMatch(/sm_90a +168 +0 +132160 +0\/0 +0/); // registers, static / dynamic smem, no spills, no stack
    expect(out).toContain('CPU reference: all 32768 C elements');
    expect(out).toContain('no CUDA device found');
    expect(out).toContain('the CPU reference computed');
  }, 120_000);

  it.runIf(hasNvcc && !hasGpu)('without a GPU, big problem: samples the CPU reference and says so', async () => {
    const { code, out } = await run(['-m=2048', '-n=2048', '-k=512', '-prec=bf16']);
    expect(code).toBe(0);
    expect(out).toMatch(/CPU reference: SAMPLED 4096 of 4194304 C elements \(a grid of rows × columns incl\. the first and last; m·n·k·b = 2\^31\.0 > 2\^30/);
    expect(out).toContain('no CUDA device found');
  }, 120_000);
});
