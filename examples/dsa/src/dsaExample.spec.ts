import { ArgParseError } from '@tilekit/host';
import { DSA_SPARSE_MLA_PREFILL_CATALOG } from '@tilekit/kernel-dsa';
import { NvccCompiler, probe } from '@tilekit/runtime';
import { describe, expect, it } from 'vitest';
import { runDsaExample } from './dsaExample.ts';
import { dsaParser, problemFromArgs } from './dsaFlags.ts';

const hasNvcc = NvccCompiler.available();
const hasGpu = probe().deviceCount > 0;
if (!hasNvcc) console.warn('\n!!! SKIPPING the example_dsa run: nvcc not found (set TILEKIT_NVCC). !!!\n');

async function run(argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runDsaExample(dsaParser.parse(argv), (l) => lines.push(l));
  return { code, out: lines.join('\n') };
}

describe('example_dsa', () => {
  it('maps its CK-style flags to a problem', () => {
    expect(problemFromArgs(dsaParser.parse(['-b=3', '-L=1000', '-next_n=2', '-h=32', '-h_q=64', '-topk=7', '-sink=1']))).toEqual({
      mode: 'decode',
      batch: 3,
      nextN: 2,
      context: 1000,
      indexHeads: 32,
      hQ: 64,
      topk: 7,
      sink: true,
      splits: undefined,
    });
    expect(problemFromArgs(dsaParser.parse(['-mode=prefill', '-s=17', '-L=259', '-splits=3']))).toMatchObject({
      mode: 'prefill',
      batch: 1,
      nextN: 17,
      context: 259,
      splits: 3,
    });
    expect(dsaParser.help()).toContain('-h_q');
  });

  it.runIf(hasNvcc && !hasGpu)(
    'without a GPU: generates and compiles every kernel of the path, prints their resources, runs the whole CPU reference, says no device, exits 0',
    async () => {
      const { code, out } = await run(['-b=1', '-L=127', '-next_n=2', '-topk=17', '-h_q=64', '-v=1']);
      expect(code).toBe(0);
      expect(out).toContain('decode: 1 sequences × next_n 2, context 127 tokens');
      expect(out).toMatch(/dsa_indexer_decode_h64_n2_s8 +\d+ +0 +0\/0 +0/);
      expect(out).toMatch(/dsa_topk_\w*pageTable\w* +\d+ +0 +0\/0 +0/);
      expect(out).toMatch(/dsa_sparse_mla_decode_cr216_pr72_final +\d+ +0 +0\/0 +0/);
      expect(out).toContain('CPU reference of the whole path: 254 logits, 34 of 34 top-k entries selected, 65536 outputs');
      expect(out).toContain('no CUDA device found');
      const prefill = await run(['-mode=prefill', '-s=5', '-L=70', '-h=32', '-topk=9', '-sink=1']);
      expect(prefill.out).toMatch(/dsa_indexer_prefill_h32_s4 +\d+ +0 +0\/0 +0/);
      expect(prefill.out).toMatch(new RegExp(`${DSA_SPARSE_MLA_PREFILL_CATALOG[0]!.name} +\\d+ +0 +0/0 +0`));
      expect(prefill.out).toContain('CPU reference of the whole path: 350 logits, 45 of 45 top-k entries selected');
    },
    300_000,
  );

  it('rejects what the kernels do not serve as one-line flag errors, before any work', async () => {
    await expect(run(['-topk=5000'])).rejects.toThrow(/-topk=5000/);
    await expect(run(['-mode=prefill', '-s=300', '-L=200'])).rejects.toThrow(/-s=300: must be at most L = 200/);
    await expect(run(['-h=48'])).rejects.toThrow(ArgParseError);
    await expect(run(['-h_q=96'])).rejects.toThrow(/-h_q=96/);
    await expect(run(['-next_n=3'])).rejects.toThrow(/-next_n=3/);
  });
});
