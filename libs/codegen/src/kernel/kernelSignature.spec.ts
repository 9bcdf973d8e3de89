import { fc, test } from '@fast-check/vitest';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { float32, int32 } from '../cType.ts';
import { add, div, index } from '../ops.ts';
import { SourceBuilder } from '../sourceBuilder.ts';
import { sm80, sm90a } from '../cudaTarget.ts';
import { gfx942 } from '../hipTarget.ts';
import { host } from '../hostTarget.ts';
import { kernelParam, SCALAR_PARAM_KINDS, type KernelParam } from './kernelParam.ts';
import { argumentLayout, KERNEL_PARAM_BASE, KernelSignature, type KernelParams } from './kernelSignature.ts';
import { kernelParamsArbitrary, kernelParamValueArbitrary } from './testing/kernelSignatureArbitrary.ts';

/** A signature with random parameters and a value for each. */
const signatureWithValues = kernelParamsArbitrary().chain((params) =>
  fc
    .record(Object.fromEntries(Object.entries(params).map(([k, p]) => [k, kernelParamValueArbitrary(p)])))
    .map((values) => ({ params, values })),
);

/** What unpack must give back for a packed value (floats rounded to the stored width, ints as stored). */
function expected(p: KernelParam, v: unknown): unknown {
  if (p.kind === 'pointer') return BigInt(v as bigint);
  if (p.kind === 'tensorMap') return v;
  if (p.scalar === 'f32') return Math.fround(v as number);
  if (p.scalar === 'i64' || p.scalar === 'u64') return BigInt(v as bigint | number);
  return v;
}

describe('argument layout', () => {
  it('places axpy(float, ptr, ptr, int) like the driver: 0, 8, 16, 24', () => {
    const sig = new KernelSignature('axpy', sm90a, {
      a: kernelParam.f32(),
      x: kernelParam.pointer(float32, { const: true }),
      y: kernelParam.pointer(float32),
      n: kernelParam.i32(),
    });
    expect(sig.layout.fields.map((f) => [f.name, f.offset, f.size])).toEqual([
      ['a', 0, 4],
      ['x', 8, 8],
      ['y', 16, 8],
      ['n', 24, 4],
    ]);
    expect(sig.layout.bytes).toBe(28);
  });

  it('aligns a tensor map in absolute constant-bank addresses (48 on sm_90a, 32 on sm_80 after a char)', () => {
    const params = [
      ['c', kernelParam.i8()],
      ['map', kernelParam.tensorMap()],
      ['s', kernelParam.i16()],
    ] as const;
    expect(argumentLayout(params, 'sm_90a').fields.map((f) => f.offset)).toEqual([0, 48, 176]);
    expect(argumentLayout(params, 'sm_80').fields.map((f) => f.offset)).toEqual([0, 32, 160]);
  });

  for (const target of [sm90a, sm80, gfx942]) {
    test.prop([kernelParamsArbitrary({ tensorMaps: target !== gfx942 })])(
      `offsets ascend, never overlap, and are aligned in bank addresses (${target.name})`,
      (params) => {
        const layout = new KernelSignature('k', target, params).layout;
        let end = 0;
        for (const f of layout.fields) {
          expect(f.offset).toBeGreaterThanOrEqual(end);
          expect((KERNEL_PARAM_BASE[target.name] + f.offset) % f.align).toBe(0);
          expect(f.offset - end).toBeLessThan(f.align); // no gap larger than alignment needs
          end = f.offset + f.size;
        }
        expect(layout.bytes).toBe(end);
      },
    );
  }
});

describe('pack / unpack', () => {
  test.prop([signatureWithValues])('argument packing round-trips through the declared layout', ({ params, values }) => {
    const sig = new KernelSignature('k', sm90a, params as KernelParams);
    const packed = sig.pack(values as never);
    expect(packed.bytes.length).toBe(sig.layout.bytes);
    expect(packed.offsets).toEqual(sig.layout.fields.map((f) => f.offset));
    expect(packed.sizes).toEqual(sig.layout.fields.map((f) => f.size));
    const back = sig.unpack(packed.bytes) as Record<string, unknown>;
    for (const [k, p] of Object.entries(params)) {
      const want = expected(p, (values as Record<string, unknown>)[k]);
      if (typeof want === 'number' && Number.isNaN(want)) expect(Number.isNaN(back[k])).toBe(true);
      else expect(back[k], k).toEqual(want);
    }
    // Padding stays zero, so equal values give equal bytes (the launch ABI is deterministic).
    const covered = new Uint8Array(packed.bytes.length);
    sig.layout.fields.forEach((f) => covered.fill(1, f.offset, f.offset + f.size));
    packed.bytes.forEach((byte, i) => {
      if (covered[i] === 0) expect(byte).toBe(0);
    });
  });

  test.prop([signatureWithValues])('each parameter is written in its own bytes only', ({ params, values }) => {
    const sig = new KernelSignature('k', sm90a, params as KernelParams);
    const packed = sig.pack(values as never);
    for (const f of sig.layout.fields) {
      const view = new DataView(packed.bytes.buffer, f.offset, f.size);
      if (f.param.kind === 'pointer') expect(view.getBigUint64(0, true)).toBe(BigInt((values as Record<string, bigint>)[f.name]!));
      if (f.param.kind === 'scalar' && f.param.scalar === 'i32')
        expect(view.getInt32(0, true)).toBe((values as Record<string, number>)[f.name]);
    }
  });

  const sig = new KernelSignature('permute', sm90a, {
    src: kernelParam.pointer(float32, { const: true, align: 16 }),
    n: kernelParam.i32({ range: [1, 1000] }),
    big: kernelParam.u64(),
    map: kernelParam.tensorMap(),
  });
  const good = { src: 0x1000n, n: 5, big: 7n, map: new Uint8Array(128) };

  it.each([
    ['a missing parameter', { src: 0x1000n, n: 5, big: 7n }, 'permute.map', /is required/],
    ['an unknown parameter', { ...good, extra: 1 }, 'permute.extra', /is not a parameter of permute/],
    ['a misaligned pointer', { ...good, src: 0x1008n }, 'permute.src', /aligned to 16 bytes/],
    ['a null pointer', { ...good, src: 0n }, 'permute.src', /null pointer/],
    ['a value outside the declared range', { ...good, n: 1001 }, 'permute.n', /declared range \[1, 1000\]/],
    ['a non-integer', { ...good, n: 2.5 }, 'permute.n', /integer/],
    ['a negative unsigned', { ...good, big: -1n }, 'permute.big', /must fit in unsigned long long/],
    ['a short tensor map', { ...good, map: new Uint8Array(64) }, 'permute.map', /128 bytes/],
  ])('rejects %s with an ArgumentError naming the parameter', (_what, values, argument, rule) => {
    let error: unknown;
    try {
      sig.pack(values as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ArgumentError);
    expect((error as ArgumentError).argument).toBe(argument);
    expect((error as Error).message).toMatch(rule);
  });

  it('accepts any object with a bigint ptr (a DeviceBuffer) for a pointer', () => {
    const packed = sig.pack({ ...good, src: { ptr: 0x2000n } });
    expect(sig.unpack(packed.bytes).src).toBe(0x2000n);
  });
});

describe('entry point', () => {
  it('emits the extern "C" entry with exactly the declared parameters, tensor maps as __grid_constant__', () => {
    const sig = new KernelSignature('scale_rows', sm90a, {
      out: kernelParam.pointer(float32, { align: 16 }),
      map: kernelParam.tensorMap(),
      rows: kernelParam.i32({ range: [1, 1 << 20] }),
      scale: kernelParam.f32(),
    });
    const src = new SourceBuilder({ dialect: sm90a });
    sig.defineEntry(src, { launchBounds: { maxThreads: 128 } }, (b, { out, rows, scale }) => {
      const i = b.let('i', int32, add(div(rows, 2), 3));
      b.assign(index(out, i), scale);
    });
    const text = src.render();
    expect(text).toContain('struct alignas(64) tk_tensor_map { unsigned long long opaque[16]; };');
    expect(text).toContain(
      'extern "C" __global__ void __launch_bounds__(128) scale_rows(float* __restrict__ out, const __grid_constant__ tk_tensor_map map, int rows, float scale) {',
    );
    expect(text).toContain('const int i = (rows >> 1) + 3;'); // the declared range [1, 2^20] makes rows non-negative
    expect(text).toContain('out[i] = scale;');
  });

  it('needs a device target; tensor maps need CUDA', () => {
    expect(() => new KernelSignature('k', host, {})).toThrow(/kernel entry points/);
    expect(() => new KernelSignature('k', gfx942, { m: kernelParam.tensorMap() })).toThrow(/tensor map/);
    expect(() => new KernelSignature('k-1', sm90a, {})).toThrow(ArgumentError);
    expect(() => kernelParam.pointer(float32, { align: 12 })).toThrow(/power of two/);
    expect(() => kernelParam.i8({ range: [0, 300] })).toThrow(/range/);
  });

  it('knows every scalar kind', () => {
    expect(Object.keys(SCALAR_PARAM_KINDS)).toEqual(['i8', 'u8', 'i16', 'u16', 'i32', 'u32', 'i64', 'u64', 'f32', 'f64']);
  });
});
