import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CaseContext } from '../benchSuite.ts';
import type { TensorFile } from '../referenceProtocol.ts';
import { caseInputPath, readFileChunks, readFileRange, writeOurTensorChunks } from './dsaCaseFiles.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilekit-dsa-case-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bytes = Uint8Array.from({ length: 1000 }, (_, i) => (i * 37 + 11) & 0xff);
writeFileSync(join(dir, 'cache.bin'), bytes);

function context(inputs: Record<string, TensorFile>): CaseContext {
  return {
    dir,
    inputs,
    timing: { warmup: 0, warmupMs: 0, repetitions: 1, targetMs: 1, minLaunches: 1, maxLaunches: 1, flushL2: false },
    baselines: {},
    readInput: () => {
      throw new Error('not here');
    },
    writeTensor: () => {
      throw new Error('not here');
    },
    log: () => {},
  };
}

describe('dsa case files in chunks', () => {
  it('reads a file chunk by chunk (the last one short), each with its offset', () => {
    const seen: [number, number][] = [];
    const copy = new Uint8Array(1000);
    readFileChunks(
      join(dir, 'cache.bin'),
      1000,
      (chunk, offset) => {
        seen.push([offset, chunk.length]);
        copy.set(chunk, offset);
      },
      300,
    );
    expect(seen).toEqual([
      [0, 300],
      [300, 300],
      [600, 300],
      [900, 100],
    ]);
    expect(copy).toEqual(bytes);
  });

  it('says where a file ends early; reads a range at its offset', () => {
    expect(() => readFileChunks(join(dir, 'cache.bin'), 1200, () => {}, 512)).toThrow(/ends at 1000 bytes, expected 1200/);
    expect(readFileRange(join(dir, 'cache.bin'), 990, 10)).toEqual(bytes.subarray(990));
    expect(() => readFileRange(join(dir, 'cache.bin'), 995, 10)).toThrow(/ends before 1005 bytes/);
  });

  it('writes our output chunk by chunk as ours.<name>.bin and describes it', () => {
    const ctx = context({});
    const offsets: number[] = [];
    const file = writeOurTensorChunks(
      ctx,
      'logits',
      'fp32',
      [5, 7],
      (chunk, offset) => {
        offsets.push(offset);
        for (let i = 0; i < chunk.length; i++) chunk[i] = (offset + i) & 0xff;
      },
      28 * 2,
    );
    expect(file).toEqual({ file: 'ours.logits.bin', dtype: 'fp32', shape: [5, 7] });
    expect(offsets).toEqual([0, 56, 112]);
    expect(new Uint8Array(readFileSync(join(dir, 'ours.logits.bin')))).toEqual(Uint8Array.from({ length: 140 }, (_, i) => i & 0xff));
  });

  it('checks an input descriptor and the file size before handing out its path', () => {
    const ctx = context({ cache: { file: 'cache.bin', dtype: 'uint8', shape: [1000] } });
    expect(caseInputPath(ctx, 'cache', 'uint8', [1000])).toEqual({ path: join(dir, 'cache.bin'), bytes: 1000 });
    expect(() => caseInputPath(ctx, 'cache', 'uint8', [10, 8448])).toThrow(/input cache is uint8 \[1000\], expected uint8 \[10, 8448\]/);
    expect(() => caseInputPath(ctx, 'q', 'uint8', [1])).toThrow(/input q is missing \(the case has cache\)/);
    const short = context({ cache: { file: 'cache.bin', dtype: 'int32', shape: [300] } });
    expect(() => caseInputPath(short, 'cache', 'int32', [300])).toThrow(/input cache has 1000 bytes, expected 1200/);
  });
});
