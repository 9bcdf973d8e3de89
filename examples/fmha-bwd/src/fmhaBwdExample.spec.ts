import { checkFmhaBwdProblem } from '@tilekit/kernel-fmha-bwd';
import { ArgParseError } from '@tilekit/host';
import { NvccCompiler, probe } from '@tilekit/runtime';
import { describe, expect, it } from 'vitest';
import { FmhaBwdUnsupportedFlagError, fmhaBwdParser, problemFromArgs, runFmhaBwdExample } from './fmhaBwdExample.ts';

const hasNvcc = NvccCompiler.available();
const hasGpu = probe().deviceCount > 0;
if (!hasNvcc) console.warn('\n!!! SKIPPING the example_fmha_bwd run: nvcc not found (set TILEKIT_NVCC). !!!\n');

async function run(argv: string[]): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const code = await runFmhaBwdExample(fmhaBwdParser.parse(argv), (l) => lines.push(l));
  return { code, out: lines.join('\n') };
}

describe('example_fmha_bwd', () => {
  it("has the forward example's flags plus -deterministic and -dbias", () => {
    expect(fmhaBwdParser.flags().map((f) => f.key)).toEqual([
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
      'deterministic',
      'dbias',
      'v',
      'seed',
      'warmup',
      'repeat',
    ]);
  });

  it('maps flags to a problem: batch mode, group mode lists, layouts, GQA, determinism', () => {
    expect(
      problemFromArgs(
        fmhaBwdParser.parse([
          '-b=3',
          '-h=8',
          '-h_k=2',
          '-s=100',
          '-s_k=300',
          '-d=64',
          '-iperm=0',
          '-mask=b',
          '-deterministic=1',
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
      mask: 'b',
      scale: 0.5,
      deterministic: true,
      seqlenQ: 100,
      seqlenK: 300,
    });
    const g = checkFmhaBwdProblem(problemFromArgs(fmhaBwdParser.parse(['-mode=1', '-s=1,17,0', '-s_k=5'])));
    expect([g.mode, g.batch, g.seqstartQ, g.seqstartK, g.deterministic]).toEqual(['group', 3, [0, 1, 18, 18], [0, 5, 10, 15], false]);
  });

  it('rejects -dbias with a typed error and bad flags with ArgParseError naming the flag', async () => {
    expect(() => problemFromArgs(fmhaBwdParser.parse(['-dbias=1']))).toThrow(FmhaBwdUnsupportedFlagError);
    expect(() => problemFromArgs(fmhaBwdParser.parse(['-s=1,2']))).toThrow(ArgParseError);
    await expect(run(['-h=3', '-h_k=2', '-s=8'])).rejects.toThrow(/-h_k/);
  });

  it('an unsupported head dim: warns naming the trait and exits 1', async () => {
    const { code, out } = await run(['-d=96', '-s=8']);
    expect(code).toBe(1);
    expect(out).toMatch(/no instance.*hdimQ/);
  });

  it.runIf(hasNvcc && !hasGpu)(
    'without a GPU: prints the triple, the workspace layout and the reference, exits 0',
    async () => {
      const { code, out } = await run(['-mode=1', '-s=1,17,0,70', '-s_k=17,1,5,130', '-d=64', '-h=2', '-deterministic=1', '-mask=b']);
      expect(code).toBe(0);
      expect(out).toMatch(/dq_dk_dv_sm90_fp16_d64_window_128x128_s2_dqsplit/);
      expect(out).toMatch(/int32 nsplits\[4\] = \[1, 1, 1, 2\]/);
      expect(out).toMatch(/int64 dq_acc_offsets\[5\]/);
      expect(out).toMatch(/no CUDA device/);
    },
    300_000,
  );
});
