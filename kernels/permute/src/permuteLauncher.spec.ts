import { fc, test } from '@fast-check/vitest';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { findPermuteInstance } from './permuteCatalog.ts';
import { selectPermuteInstance } from './permuteDispatch.ts';
import { addressAlignment } from './permuteInstance.ts';
import { preparePermuteLaunch } from './permuteLauncher.ts';
import type { PermuteProblem } from './permuteProblem.ts';

const problem: PermuteProblem = { kind: 'bhsd2bshd', dtype: 'fp16', b: 2, h: 4, s: 16, d: 64 };
const bytes = 2 * 4 * 16 * 64 * 2;
const instance = findPermuteInstance('permute_head_fp16_v16_t256_u2_r2')!;

function argumentOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ArgumentError);
    return (e as ArgumentError).argument;
  }
  return undefined;
}

describe('preparePermuteLaunch (validation before any launch)', () => {
  const src = { ptr: 0x7f0000000000n, bytes };
  const dst = { ptr: 0x7f0000100000n, bytes };

  it('packs the instance arguments with the instance launch configuration', () => {
    const { launch, args } = preparePermuteLaunch(instance, problem, { src, dst });
    expect(launch).toEqual({ grid: [8, 1, 2], block: [256, 1, 1], sharedBytes: 0 });
    expect(instance.signature.unpack(args.bytes)).toEqual({ src: src.ptr, dst: dst.ptr, xdim: 4, ydim: 16, dvec: 8 });
    expect(args.offsets).toEqual([0, 8, 16, 20, 24]);
  });

  it.each([
    ['a too small source', { src: { ...src, bytes: bytes - 1 }, dst }, 'src'],
    ['a too small destination', { src, dst: { ...dst, bytes: 16 } }, 'dst'],
    ['overlapping buffers', { src, dst: { ptr: src.ptr + 64n, bytes } }, 'dst'],
    ['a source misaligned for 16-byte vectors', { src: { ptr: src.ptr + 8n, bytes }, dst }, 'problem'],
    ['a buffer that is not one', { src: { ptr: 5, bytes }, dst }, 'src'],
  ])('rejects %s', (_what, buffers, argument) => {
    expect(argumentOf(() => preparePermuteLaunch(instance, problem, buffers as never))).toBe(argument);
  });

  it('rejects a problem the instance cannot run, naming the broken predicates', () => {
    expect(() => preparePermuteLaunch(instance, { ...problem, d: 36 }, { src, dst })).toThrow(
      /d · 2 = 72 bytes is not a multiple of the 16-byte vector/,
    );
    expect(
      argumentOf(() =>
        preparePermuteLaunch(
          instance,
          { ...problem, dtype: 'fp32' },
          { src: { ...src, bytes: 2 * bytes }, dst: { ...dst, bytes: 2 * bytes } },
        ),
      ),
    ).toBe('problem');
    expect(argumentOf(() => preparePermuteLaunch(instance, { ...problem, s: 0 }, { src, dst }))).toBe('problem.s');
  });

  test.prop([
    fc.record({
      kind: fc.constantFrom('bhsd2bshd' as const, 'bshd2bhsd' as const, 'transpose' as const),
      dtype: fc.constantFrom('fp16' as const, 'bf16' as const, 'fp32' as const),
      a: fc.integer({ min: 1, max: 40 }),
      c: fc.integer({ min: 1, max: 40 }),
      d: fc.integer({ min: 1, max: 300 }),
      shift: fc.constantFrom(0n, 1n, 2n, 4n, 8n, 128n),
    }),
  ])('a dispatched instance accepts its own problem with buffers of the exact size', ({ kind, dtype, a, c, d, shift }) => {
    const p: PermuteProblem = kind === 'transpose' ? { kind, dtype, m: a * d, n: c } : { kind, dtype, b: 2, h: a, s: c, d };
    const n = (kind === 'transpose' ? a * d * c : 2 * a * c * d) * (dtype === 'fp32' ? 4 : 2);
    const s = { ptr: 0x10000000n + shift * (dtype === 'fp32' ? 4n : 2n), bytes: n };
    const t = { ptr: 0x90000000n, bytes: n };
    const chosen = selectPermuteInstance(p, { alignment: { src: addressAlignment(s.ptr), dst: addressAlignment(t.ptr) } });
    const { args } = preparePermuteLaunch(chosen, p, { src: s, dst: t });
    expect(args.sizes).toEqual(chosen.signature.layout.fields.map((f) => f.size));
    expect(chosen.signature.unpack(args.bytes)).toMatchObject({ src: s.ptr, dst: t.ptr });
  });
});

describe('addressAlignment', () => {
  it('is the largest power of two up to 256 dividing the address', () => {
    expect(addressAlignment(0x1000n)).toBe(256);
    expect(addressAlignment(0x1008n)).toBe(8);
    expect(addressAlignment(0x1001n)).toBe(1);
  });
});
