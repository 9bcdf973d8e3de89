import { ArgParseError } from '@tilekit/host';
import { NvccCompiler, probe } from '@tilekit/runtime';
import { describe, expect, it } from 'vitest';
import { permuteParser, problemFromArgs, runPermuteExample } from './permuteExample.ts';

const hasNvcc = NvccCompiler.available();
const hasGpu = probe().deviceCount > 0;
if (!hasNvcc) console.warn('\n!!! SKIPPING the example_permute run: nvcc not found (set TILEKIT_NVCC). !!!\n');

async function run(argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runPermuteExample(permuteParser.parse(argv), (l) => lines.push(l));
  return { code, out: lines.join('\n') };
}

describe('example_permute', () => {
  it('maps its CK-style flags to a problem', () => {
    expect(problemFromArgs(permuteParser.parse(['-perm=bshd2bhsd', '-prec=bf16', '-b=3', '-h=4', '-s=5', '-d=64']))).toEqual({
      kind: 'bshd2bhsd',
      dtype: 'bf16',
      b: 3,
      h: 4,
      s: 5,
      d: 64,
    });
    expect(problemFromArgs(permuteParser.parse(['-perm=transpose', '-m=7', '-n=9']))).toEqual({
      kind: 'transpose',
      dtype: 'fp16',
      m: 7,
      n: 9,
    });
    expect(permuteParser.help()).toContain('-perm      bhsd2bshd|bshd2bhsd|transpose');
  });

  it.runIf(hasNvcc && !hasGpu)(
    'without a GPU: generates and compiles the kernel, prints its resources, runs the CPU reference, says no device, exits 0',
    async () => {
      const { code, out } = await run(['-perm=transpose', '-prec=fp32', '-m=96', '-n=40', '-v=1']);
      expect(code).toBe(0);
      expect(out).toContain('instance: permute_transpose_fp32_v16_128x64_t256_r8_i32');
      expect(out).toMatch(/sm_90a +\d+ +32768 +0\/0 +0/); // registers, shared memory, no spills, no stack
      expect(out).toContain('CPU reference: 3840 elements');
      expect(out).toContain('no CUDA device found');
    },
  );

  it.runIf(hasNvcc)('reports why no instance runs a problem (exit 1), and bad flags as ArgParseErrors', async () => {
    const { code, out } = await run(['-d=1500']);
    expect(code).toBe(1);
    expect(out).toMatch(/permute_head_fp16_v16_t256_u4_r1: .*d = 1500 exceeds 1024/);
    await expect(run(['-s=0'])).rejects.toThrow(ArgParseError);
    await expect(run(['-instance=nope'])).rejects.toThrow(/no such instance/);
    await expect(run(['-repeat=0'])).rejects.toThrow(/-repeat=0/);
  });
});
