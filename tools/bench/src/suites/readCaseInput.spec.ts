import { describe, expect, it } from 'vitest';
import type { CaseContext } from '../benchSuite.ts';
import type { TensorFile } from '../referenceProtocol.ts';
import { readCaseInput } from './readCaseInput.ts';

/** A context whose inputs are `files` with `bytes` as their contents. */
function fakeContext(files: Record<string, TensorFile>, bytes: Record<string, Uint8Array>): CaseContext {
  return {
    dir: '/nowhere',
    inputs: files,
    timing: { warmup: 0, warmupMs: 0, repetitions: 1, targetMs: 1, minLaunches: 1, maxLaunches: 1, flushL2: false },
    baselines: {},
    readInput: (name) => bytes[name]!,
    writeTensor: () => {
      throw new Error('not here');
    },
    log: () => {},
  };
}

describe('readCaseInput', () => {
  const a: TensorFile = { file: 'a.bin', dtype: 'bf16', shape: [2, 3] };

  it('returns the bytes of an input whose descriptor and size match', () => {
    const bytes = new Uint8Array(12);
    expect(readCaseInput(fakeContext({ a }, { a: bytes }), 'a', 'bf16', [2, 3])).toBe(bytes);
  });

  it('names what does not match', () => {
    const ctx = fakeContext({ a }, { a: new Uint8Array(10) });
    expect(() => readCaseInput(ctx, 'b', 'bf16', [2, 3])).toThrow('input b is missing (the case has a)');
    expect(() => readCaseInput(ctx, 'a', 'fp16', [2, 3])).toThrow('input a is bf16 [2, 3], expected fp16 [2, 3]');
    expect(() => readCaseInput(ctx, 'a', 'bf16', [3, 2])).toThrow('input a is bf16 [2, 3], expected bf16 [3, 2]');
    expect(() => readCaseInput(ctx, 'a', 'bf16', [2, 3])).toThrow('input a has 10 bytes, expected 12');
  });
});
