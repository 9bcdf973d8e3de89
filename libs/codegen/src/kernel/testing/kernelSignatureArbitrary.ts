// Random kernel signatures and argument values, for property tests of the argument layout (here and
// in packages that pack arguments). Test-only: imports fast-check.
import fc from 'fast-check';
import { float32, float64, int32, uint8 } from '../../cType.ts';
import type { CType } from '../../cType.ts';
import { kernelParam, SCALAR_PARAM_KINDS, type KernelParam, type ScalarParamKind } from '../kernelParam.ts';

const scalarKinds = Object.keys(SCALAR_PARAM_KINDS) as ScalarParamKind[];
const pointees: readonly CType[] = [float32, float64, int32, uint8];

/** One random parameter declaration (integer scalars sometimes with a range, pointers with an alignment). */
export function kernelParamArbitrary(options: { readonly tensorMaps?: boolean } = {}): fc.Arbitrary<KernelParam> {
  const scalar = fc.constantFrom(...scalarKinds).chain((kind) => {
    const t = SCALAR_PARAM_KINDS[kind].type;
    if (t.kind !== 'int') return fc.constant(kernelParam.scalar(kind));
    return fc
      .option(fc.tuple(fc.bigInt(t.min, t.max), fc.bigInt(t.min, t.max)), { nil: undefined })
      .map((r) =>
        r === undefined ? kernelParam.scalar(kind) : kernelParam.scalar(kind, { range: r[0] <= r[1] ? [r[0], r[1]] : [r[1], r[0]] }),
      );
  });
  const ptr = fc
    .record({ pointee: fc.constantFrom(...pointees), isConst: fc.boolean(), align: fc.constantFrom(1, 4, 16, 128), nullable: fc.boolean() })
    .map((o) => kernelParam.pointer(o.pointee, { const: o.isConst, align: o.align, nullable: o.nullable }));
  const kinds: fc.Arbitrary<KernelParam>[] = [scalar, scalar, ptr];
  if (options.tensorMaps ?? true) kinds.push(fc.constant(kernelParam.tensorMap()));
  return fc.oneof(...kinds);
}

/** A random parameter list `p0, p1, ...` (0 to `maxParams` entries). */
export function kernelParamsArbitrary(
  options: { readonly maxParams?: number; readonly tensorMaps?: boolean } = {},
): fc.Arbitrary<Record<string, KernelParam>> {
  return fc
    .array(kernelParamArbitrary(options), { maxLength: options.maxParams ?? 12 })
    .map((ps) => Object.fromEntries(ps.map((p, i) => [`p${i}`, p])));
}

/** A value `pack` accepts for `p` (inside its type and declared range, aligned, non-null unless nullable). */
export function kernelParamValueArbitrary(p: KernelParam): fc.Arbitrary<unknown> {
  if (p.kind === 'tensorMap') return fc.uint8Array({ minLength: 128, maxLength: 128 });
  if (p.kind === 'pointer') {
    const align = BigInt(p.align);
    return fc.bigInt(p.nullable ? 0n : 1n, (1n << 64n) / align - 1n).map((k) => k * align);
  }
  if (p.scalar === 'f32') return fc.float({ noDefaultInfinity: false });
  if (p.scalar === 'f64') return fc.double();
  const t = SCALAR_PARAM_KINDS[p.scalar].type;
  if (t.kind !== 'int') return fc.constant(0);
  const lo = p.range?.min ?? t.min;
  const hi = p.range?.max ?? t.max;
  const big = fc.bigInt(lo, hi);
  return t.bits === 64 ? big : big.map(Number);
}
