import { ArgParseError } from '@tilekit/host';
import { NvccCompiler, probe } from '@tilekit/runtime';
import { describe, expect, it } from 'vitest';
import { runDsaIndexerExample } from './dsaIndexerExample.ts';
import { dsaIndexerParser, problemFromArgs } from './dsaIndexerFlags.ts';

const hasNvcc = NvccCompiler.available();
const hasGpu = probe().deviceCount > 0;
if (!hasNvcc) console.warn('\n!!! SKIPPING the example_dsa_indexer run: nvcc not found (set TILEKIT_NVCC). !!!\n');

async function run(argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runDsaIndexerExample(dsaIndexerParser.parse(argv), (l) => lines.push(l));
  return { code, out: lines.join('\n') };
}

describe('example_dsa_indexer', () => {
  it('maps its CK-style flags to a problem', () => {
    expect(problemFromArgs(dsaIndexerParser.parse(['-b=3', '-L=1000', '-next_n=2', '-h=32', '-topk=7']))).toEqual({
      mode: 'decode',
      batch: 3,
      queries: 6,
      context: 1000,
      heads: 32,
      topk: 7,
      nextN: 2,
      scaleFormat: 'fp32',
    });
    expect(problemFromArgs(dsaIndexerParser.parse(['-mode=prefill', '-s=17', '-L=259', '-scale=ue8m0']))).toMatchObject({
      mode: 'prefill',
      batch: 1,
      queries: 17,
      context: 259,
      scaleFormat: 'ue8m0',
    });
    expect(dsaIndexerParser.help()).toContain('-mode');
  });

  it.runIf(hasNvcc && !hasGpu)(
    'without a GPU: generates and compiles every kernel, prints their resources, runs the CPU reference, says no device, exits 0',
    async () => {
      const { code, out } = await run(['-b=1', '-L=127', '-next_n=2', '-topk=17', '-v=1']);
      expect(code).toBe(0);
      expect(out).toContain('decode: 1 sequences × next_n 2, context 127 tokens');
      expect(out).toMatch(/dsa_index_cache_writer_sfp32 +\d+ +0 +0\/0 +0/);
      expect(out).toMatch(/dsa_indexer_decode_h64_n2_s8 +\d+ +0 +0\/0 +0/);
      expect(out).toMatch(/dsa_topk_\w+ +\d+ +0 +0\/0 +0/);
      expect(out).toContain('CPU reference: 254 logits');
      expect(out).toContain('no CUDA device found');
      const prefill = await run(['-mode=prefill', '-s=5', '-L=70', '-h=32', '-topk=9']);
      expect(prefill.out).toMatch(/dsa_indexer_prefill_h32_s4 +\d+ +0 +0\/0 +0/);
      expect(prefill.out).toContain('CPU reference: 350 logits');
    },
    120_000,
  );

  it('rejects what the kernels do not serve as one-line flag errors, before any work', async () => {
    await expect(run(['-d=64'])).rejects.toThrow(/-d=64: must be 128/);
    await expect(run(['-page=32'])).rejects.toThrow(/-page=32: must be 64/);
    await expect(run(['-topk=5000'])).rejects.toThrow(/-topk=5000: must be at most 4096/);
    await expect(run(['-mode=prefill', '-s=300', '-L=200'])).rejects.toThrow(/-s=300: must be at most L = 200/);
    await expect(run(['-h=48'])).rejects.toThrow(ArgParseError);
    await expect(run(['-next_n=3'])).rejects.toThrow(/-next_n=3/);
  });
});
