import fc from 'fast-check';
import { ArgumentError, TilekitError, roundTo } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { HostTensor, NonContiguousError } from './hostTensor.ts';
import { inversePermutation, unravelIndex } from './shape.ts';
import { applyViewChain, hostTensorArb, permutationArb, viewChainArb } from './testing/index.ts';

const iota = (dtype: 'fp32' | 'fp16' | 'int32', shape: number[]) => {
  const size = shape.reduce((a, b) => a * b, 1);
  return HostTensor.fromValues(
    dtype,
    shape,
    Array.from({ length: size }, (_, i) => i),
  );
};

/** Logical values read element by element through get(), independent of toFloat64Array's walk. */
const valuesByGet = (t: HostTensor) => Array.from({ length: t.size }, (_, f) => t.get(unravelIndex(f, t.shape)));

describe('HostTensor construction', () => {
  it('golden: packed row-major fp16 tensor', () => {
    const t = HostTensor.empty('fp16', [2, 3]);
    expect(t.shape).toEqual([2, 3]);
    expect(t.strides).toEqual([3, 1]);
    expect([t.offset, t.size, t.rank, t.byteLength, t.isContiguous]).toEqual([0, 6, 2, 12, true]);
    expect(t.storage).toBeInstanceOf(Uint16Array);
    expect(t.toFloat64Array()).toEqual(new Float64Array(6));
    expect(String(t)).toBe('HostTensor(fp16, shape [2,3], strides [3,1], offset 0)');
  });

  it('stores values rounded through the dtype, little-endian bytes', () => {
    const t = HostTensor.fromValues('fp16', [2], [1, 0.1]);
    expect(t.get([1])).toBe(roundTo('fp16', 0.1));
    expect(t.get([1])).not.toBe(0.1);
    expect([...t.bytes()]).toEqual([0x00, 0x3c, 0x66, 0x2e]);
    const b = HostTensor.zeros('bf16', [1]);
    b.set([0], 1 + 2 ** -9);
    expect(b.get([0])).toBe(1);
    const i8 = HostTensor.full('int8', [2, 2], 300);
    expect(i8.toFloat64Array()).toEqual(new Float64Array([127, 127, 127, 127]));
    const f8 = HostTensor.zeros('fp8e4m3fn', [1]);
    f8.setAt(0, 1000, { saturate: true });
    expect(f8.at(0)).toBe(448);
  });

  it('explicit strides: storage sized by the span; values fill the logical order', () => {
    const t = HostTensor.fromValues('fp32', [2, 3], [0, 1, 2, 3, 4, 5], { strides: [1, 2] });
    expect(t.storage.length).toBe(6);
    expect([...t.storage]).toEqual([0, 3, 1, 4, 2, 5]);
    expect(t.isContiguous).toBe(false);
    expect(t.toFloat64Array()).toEqual(new Float64Array([0, 1, 2, 3, 4, 5]));
    const padded = HostTensor.empty('fp32', [2, 3], { strides: [4, 1] });
    expect([padded.storage.length, padded.byteLength]).toEqual([7, 28]);
  });

  it('rank-0 and empty tensors', () => {
    const scalar = HostTensor.fromValues('fp32', [], [2.5]);
    expect([scalar.size, scalar.get([]), scalar.at(0)]).toEqual([1, 2.5, 2.5]);
    const empty = HostTensor.empty('fp16', [2, 0, 3]);
    expect([empty.size, empty.byteLength, empty.bytes().length, empty.toFloat64Array().length]).toEqual([0, 0, 0, 0]);
    expect(empty.contiguous().shape).toEqual([2, 0, 3]);
  });

  it('fromStorage wraps existing storage without copying', () => {
    const t = iota('fp16', [2, 3]);
    const alias = HostTensor.fromStorage('fp16', [3], t.storage, { offset: 3 });
    expect([...alias.toFloat64Array()]).toEqual([3, 4, 5]);
    alias.set([0], 42);
    expect(t.get([1, 0])).toBe(42);
  });

  it('errors name the method, the argument and what was found', () => {
    expect(() => HostTensor.empty('fp32', [2, -3])).toThrow(
      'HostTensor.empty: shape must be an array of non-negative integers (got [2,-3])',
    );
    expect(() => HostTensor.empty('fp32', [2, 3], { strides: [1] })).toThrow(
      'HostTensor.empty: strides must be 2 non-negative integers, one per axis of [2,3] (got [1])',
    );
    expect(() => HostTensor.empty('fp99' as 'fp32', [1])).toThrow(ArgumentError);
    expect(() => HostTensor.fromValues('fp32', [2, 2], [1, 2, 3])).toThrow(
      'HostTensor.fromValues: values must have 4 entries for shape [2,2] (got 3)',
    );
    expect(() => HostTensor.fromStorage('fp16', [2], new Float32Array(2))).toThrow(
      'HostTensor.fromStorage: storage must be a Uint16Array for fp16 (got "Float32Array")',
    );
    expect(() => HostTensor.fromStorage('fp32', [4], new Float32Array(3))).toThrow(
      'HostTensor.fromStorage: storage must hold at least offset + 4 = 4 elements (got 3)',
    );
    const t = iota('fp32', [2, 3, 4, 5]);
    expect(() => t.get([0, 3, 0, 0])).toThrow(
      'HostTensor.get: index entry 1 must be an integer in [0, 3) for shape [2,3,4,5] (got [0,3,0,0])',
    );
    expect(() => t.set([0, 0], 1)).toThrow('HostTensor.set: index must have 4 entries for shape [2,3,4,5] (got [0,0])');
    expect(() => t.at(120)).toThrow('HostTensor.at: flat index must be an integer in [0, 120) for shape [2,3,4,5] (got 120)');
    expect(() => t.permute([0, 0, 1, 2])).toThrow('permute: axes must be a permutation of 0..3 (got [0,0,1,2])');
    expect(() => t.permute([0, 1, 2])).toThrow(ArgumentError);
    expect(() => t.transpose(0, 4)).toThrow('transpose: b must be an axis in [0, 4) (got 4)');
    expect(() => t.slice(1, 2, 4)).toThrow('slice: start and end must be integers with 0 <= start <= end <= 3 on axis 1 (got [2,4])');
    expect(() => t.slice(-1, 0, 1)).toThrow('slice: axis must be an axis in [0, 4) (got -1)');
    expect(() => t.view([7, -1])).toThrow('view: shape with -1 must divide the 120 elements (got [7,-1])');
    expect(() => t.view([-1, -1])).toThrow('view: shape may contain at most one -1 (got [-1,-1])');
    expect(() => t.reshape([2, 3])).toThrow('reshape: shape must have 120 elements (got [2,3])');
  });
});

describe('HostTensor views', () => {
  it('golden: permute, transpose, slice, view share storage', () => {
    const t = iota('fp32', [2, 3, 4]);
    const p = t.permute([2, 0, 1]);
    expect([p.shape, p.strides]).toEqual([
      [4, 2, 3],
      [1, 12, 4],
    ]);
    expect(p.get([3, 1, 2])).toBe(t.get([1, 2, 3]));
    expect(t.transpose(0, 2).strides).toEqual([1, 4, 12]);
    const s = t.slice(1, 1, 3);
    expect([s.shape, s.offset, s.isContiguous]).toEqual([[2, 2, 4], 4, false]);
    expect(s.get([0, 0, 0])).toBe(4);
    const rows = t.slice(0, 1);
    expect([rows.isContiguous, rows.view([-1]).shape, rows.view([12]).at(0)]).toEqual([true, [12], 12]);
    expect(rows.bytes().byteOffset).toBe(12 * 4);
    expect(t.reshape([6, -1]).shape).toEqual([6, 4]);
    p.set([0, 0, 0], -7);
    expect(t.get([0, 0, 0])).toBe(-7);
  });

  it('view of a strided tensor raises NonContiguousError; contiguous() fixes it', () => {
    const t = iota('fp16', [2, 3]).transpose(0, 1);
    const error = (() => {
      try {
        t.view([6]);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(NonContiguousError);
    expect(error).toBeInstanceOf(TilekitError);
    expect((error as TilekitError).code).toBe('host/non-contiguous');
    expect((error as Error).message).toBe('view: the tensor (shape [3,2], strides [1,3]) is not contiguous; call contiguous() first');
    expect([...t.contiguous().view([6]).toFloat64Array()]).toEqual([0, 3, 1, 4, 2, 5]);
  });

  it('permute ∘ inverse permute = identity', () => {
    fc.assert(
      fc.property(
        hostTensorArb('fp16').chain((t) => fc.tuple(fc.constant(t), permutationArb(t.rank))),
        ([t, axes]) => {
          const back = t.permute(axes).permute(inversePermutation(axes));
          expect([back.shape, back.strides, back.offset]).toEqual([t.shape, t.strides, t.offset]);
          expect(back.storage).toBe(t.storage);
          expect(back.toFloat64Array()).toEqual(t.toFloat64Array());
        },
      ),
    );
  });

  it('element access through a view equals access through the base', () => {
    fc.assert(
      fc.property(hostTensorArb('bf16'), viewChainArb(), (base, steps) => {
        const { view, toBase } = applyViewChain(base, steps);
        expect(view.storage).toBe(base.storage);
        for (let f = 0; f < view.size; f++) {
          const index = unravelIndex(f, view.shape);
          expect(view.get(index)).toBe(base.get(toBase(index)));
          expect(view.at(f)).toBe(view.get(index));
        }
        expect([...view.toFloat64Array()]).toEqual(valuesByGet(view));
      }),
    );
  });

  it('writes through a view land in the base', () => {
    fc.assert(
      fc.property(hostTensorArb('fp8e5m2'), viewChainArb(), (base, steps) => {
        const { view, toBase } = applyViewChain(base, steps);
        if (view.size === 0) return;
        const index = unravelIndex(view.size - 1, view.shape);
        view.set(index, 3);
        expect(base.get(toBase(index))).toBe(3);
      }),
    );
  });

  it('contiguous() preserves values bit-exactly and is packed with fresh storage', () => {
    fc.assert(
      fc.property(hostTensorArb('fp32', { minLength: 0 }), viewChainArb(), (base, steps) => {
        const { view } = applyViewChain(base, steps);
        const c = view.contiguous();
        expect([c.shape, c.isContiguous, c.offset, c.byteLength]).toEqual([view.shape, true, 0, view.size * 4]);
        expect(c.storage).not.toBe(view.storage);
        expect(c.toFloat64Array()).toEqual(view.toFloat64Array());
        expect(valuesByGet(c)).toEqual(valuesByGet(view));
      }),
    );
  });

  it('contiguous() keeps fp32 NaN payloads (signalling ones too) bit for bit', () => {
    const t = HostTensor.zeros('fp32', [2, 2]);
    const bits = new Uint32Array(t.storage.buffer);
    bits.set([0x7f800001, 0xffbfffff, 0x7fc00123, 0x3f800000]);
    const copied = new Uint32Array(t.transpose(0, 1).contiguous().storage.buffer);
    expect([...copied]).toEqual([0x7f800001, 0x7fc00123, 0xffbfffff, 0x3f800000]);
  });
});
