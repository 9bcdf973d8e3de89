import { fc, test } from '@fast-check/vitest';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { KernelArgsBuilder, kernelArgs } from './kernelArgs.ts';

type Arg =
  | { kind: 'pointer'; value: bigint }
  | { kind: 'i32'; value: number }
  | { kind: 'u32'; value: number }
  | { kind: 'f32'; value: number }
  | { kind: 'f64'; value: number }
  | { kind: 'u64'; value: bigint }
  | { kind: 'raw'; value: Uint8Array; alignment: number };

const argArb: fc.Arbitrary<Arg> = fc.oneof(
  fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map((value) => ({ kind: 'pointer' as const, value })),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map((value) => ({ kind: 'i32' as const, value })),
  fc.integer({ min: 0, max: 2 ** 32 - 1 }).map((value) => ({ kind: 'u32' as const, value })),
  fc.float({ noNaN: true }).map((value) => ({ kind: 'f32' as const, value })),
  fc.double({ noNaN: true }).map((value) => ({ kind: 'f64' as const, value })),
  fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map((value) => ({ kind: 'u64' as const, value })),
  fc
    .tuple(fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.constantFrom(1, 2, 4, 8, 16, 64))
    .map(([value, alignment]) => ({ kind: 'raw' as const, value, alignment })),
);

function add(builder: KernelArgsBuilder, arg: Arg): void {
  if (arg.kind === 'raw') builder.raw(arg.value, arg.alignment);
  else if (arg.kind === 'pointer') builder.pointer(arg.value);
  else if (arg.kind === 'u64') builder.u64(arg.value);
  else builder[arg.kind](arg.value);
}

function alignmentOf(arg: Arg): number {
  return arg.kind === 'raw' ? arg.alignment : arg.kind === 'i32' || arg.kind === 'u32' || arg.kind === 'f32' ? 4 : 8;
}

describe('KernelArgsBuilder', () => {
  test.prop([fc.array(argArb, { maxLength: 24 })])(
    'packs at natural alignment, without overlap, and the bytes read back as the values',
    (args) => {
      const builder = new KernelArgsBuilder();
      for (const arg of args) add(builder, arg);
      const packed = builder.build();
      expect(packed.offsets).toHaveLength(args.length);
      const view = new DataView(packed.bytes.buffer, packed.bytes.byteOffset, packed.bytes.byteLength);
      let end = 0;
      args.forEach((arg, i) => {
        const offset = packed.offsets[i]!;
        expect(offset % alignmentOf(arg)).toBe(0);
        expect(offset).toBeGreaterThanOrEqual(end);
        end = offset + packed.sizes[i]!;
        if (arg.kind === 'pointer' || arg.kind === 'u64') expect(view.getBigUint64(offset, true)).toBe(arg.value);
        if (arg.kind === 'i32') expect(view.getInt32(offset, true)).toBe(arg.value);
        if (arg.kind === 'u32') expect(view.getUint32(offset, true)).toBe(arg.value);
        if (arg.kind === 'f32') expect(view.getFloat32(offset, true)).toBe(Math.fround(arg.value));
        if (arg.kind === 'f64') expect(view.getFloat64(offset, true)).toBe(arg.value);
        if (arg.kind === 'raw') expect(packed.bytes.slice(offset, offset + arg.value.length)).toEqual(arg.value);
      });
      expect(packed.bytes.length).toBe(end);
    },
  );

  it('lays out (float*, float*, int) like the C ABI', () => {
    const packed = kernelArgs((b) => b.pointer(0x1000n).pointer({ ptr: 0x2000n }).i32(7));
    expect(packed.offsets).toEqual([0, 8, 16]);
    expect(packed.sizes).toEqual([8, 8, 4]);
    expect(packed.bytes.length).toBe(20);
  });

  it('puts a CUtensorMap at a 64-byte boundary', () => {
    const packed = kernelArgs((b) => b.i32(1).tensorMap(new Uint8Array(128)).pointer(1n));
    expect(packed.offsets).toEqual([0, 64, 192]);
    expect(packed.sizes).toEqual([4, 128, 8]);
  });

  it('rejects values that do not fit, naming the parameter', () => {
    expect(() => new KernelArgsBuilder().i32(2 ** 31)).toThrow(ArgumentError);
    expect(() => new KernelArgsBuilder().u32(-1)).toThrow(/param 0/);
    expect(() => new KernelArgsBuilder().f32(1).u32(1.5)).toThrow(/param 1/);
    expect(() => new KernelArgsBuilder().pointer(-1n)).toThrow(ArgumentError);
    expect(() => new KernelArgsBuilder().tensorMap(new Uint8Array(64))).toThrow(/128 bytes/);
    expect(() => new KernelArgsBuilder().raw(new Uint8Array(4), 3)).toThrow(/power of two/);
  });
});
