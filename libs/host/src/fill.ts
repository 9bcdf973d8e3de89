import { ArgumentError, type DType, setStorageElement } from '@tilekit/numeric';
import { ArgParseError } from './argParser.ts';
import type { HostTensor } from './hostTensor.ts';
import { Prng, type Seed } from './prng.ts';

/**
 * How to initialize a tensor, after CK-tile's `-init` kinds (`ck_tile/host/fill.hpp`):
 * - `uf` uniform float in [min, max) — CK's `FillUniformDistribution`, examples' default [0, 1);
 * - `ui` uniform integer in [min, max] (inclusive, every integer equally likely) — CK's
 *   `FillUniformDistributionIntegerValue`, default [−3, 3];
 * - `nf` normal float N(mean, stddev²) — CK's `FillNormalDistribution`, default mean 0, stddev 3;
 * - `ni` normal rounded to the nearest integer (ties away from zero, like std::round) — CK's
 *   `FillNormalDistributionIntegerValue`, default mean 0, stddev 3;
 * - `ufq` (written `uf:q`) uniform in [−max, max) of the tensor's dtype (fp8 quantization tests);
 * - `tf` the trigonometric pattern cos(i) over the row-major element number i (`FillTrigValue`);
 * - `constant` every element `value` (`FillConstant`).
 *
 * Differences from CK, on purpose: CK's integer fills round a uniform *float* (so the end points
 * are half as likely) and its examples pass (mean, variance) pairs such as (−3, 3) to the normal
 * fills; we draw integers uniformly and parameterize normals by (mean, stddev), centred at 0.
 */
export type FillSpec =
  | { readonly kind: 'uf'; readonly min: number; readonly max: number }
  | { readonly kind: 'ui'; readonly min: number; readonly max: number }
  | { readonly kind: 'nf'; readonly mean: number; readonly stddev: number }
  | { readonly kind: 'ni'; readonly mean: number; readonly stddev: number }
  | { readonly kind: 'ufq' }
  | { readonly kind: 'tf' }
  | { readonly kind: 'constant'; readonly value: number };

/** The kinds of FillSpec. */
export type FillKind = FillSpec['kind'];

/** Default parameters of the parameterized kinds (CK examples' values, see FillSpec). */
export const fillDefaults = {
  uf: { kind: 'uf', min: 0, max: 1 },
  ui: { kind: 'ui', min: -3, max: 3 },
  nf: { kind: 'nf', mean: 0, stddev: 3 },
  ni: { kind: 'ni', mean: 0, stddev: 3 },
} as const satisfies Record<string, FillSpec>;

/** CK fmha_fwd's numeric `-init` aliases. */
const ALIASES: Record<string, string> = { '0': 'ui', '1': 'uf', '2': 'tf', '3': 'uf:q' };

const GRAMMAR = 'expected uf[:min,max], ui[:min,max], nf[:mean,stddev], ni[:mean,stddev], uf:q, tf or constant:value';

/**
 * Parses a fill spec as written on a command line: `uf`, `uf:-2,2`, `uf:q`, `ui`, `ui:-5,5`,
 * `nf`, `nf:0,1`, `ni`, `ni:0,2`, `tf`, `constant:0.5`, or CK's aliases `0` (ui), `1` (uf),
 * `2` (tf), `3` (uf:q). Omitted parameters take `fillDefaults`. Errors are ArgumentError
 * (`fill spec: …`), or ArgParseError (`-init=xx: …`) when the `flag` it came from is given.
 * Postcondition (property-tested): `parseFillSpec(formatFillSpec(s))` equals `s`.
 */
export function parseFillSpec(text: string, flag?: string): FillSpec {
  const fail = (rule: string): never => {
    if (flag !== undefined) throw new ArgParseError(flag, `${flag}=${text}: ${rule}`);
    throw new ArgumentError('fill spec', rule, text);
  };
  if (typeof text !== 'string') return fail(GRAMMAR);
  const source = ALIASES[text.trim()] ?? text.trim();
  const colon = source.indexOf(':');
  const kind = (colon < 0 ? source : source.slice(0, colon)).toLowerCase();
  const params = colon < 0 ? undefined : source.slice(colon + 1);
  const numbers = (count: number, names: string): number[] => {
    const parts = (params ?? '').split(',');
    const values = parts.map((p) => (p.trim() === '' ? Number.NaN : Number(p)));
    if (parts.length !== count || values.some((v) => !Number.isFinite(v))) fail(`${kind} takes ${names} as finite numbers`);
    return values;
  };
  switch (kind) {
    case 'uf': {
      if (params?.trim().toLowerCase() === 'q') return { kind: 'ufq' };
      if (params === undefined) return fillDefaults.uf;
      const [min, max] = numbers(2, 'min,max') as [number, number];
      if (!(min < max)) fail('uf takes min,max with min < max');
      return { kind: 'uf', min, max };
    }
    case 'ui': {
      if (params === undefined) return fillDefaults.ui;
      const [min, max] = numbers(2, 'min,max') as [number, number];
      if (!(Math.ceil(min) <= Math.floor(max))) fail('ui takes min,max with at least one integer in [min, max]');
      return { kind: 'ui', min, max };
    }
    case 'nf':
    case 'ni': {
      if (params === undefined) return fillDefaults[kind];
      const [mean, stddev] = numbers(2, 'mean,stddev') as [number, number];
      if (stddev < 0) fail(`${kind} takes mean,stddev with stddev >= 0`);
      return { kind, mean, stddev };
    }
    case 'ufq':
      if (params === undefined) return { kind: 'ufq' };
      break;
    case 'tf':
      if (params === undefined) return { kind: 'tf' };
      break;
    case 'constant': {
      if (params === undefined) fail('constant takes a value (constant:0.5)');
      const [value] = numbers(1, 'value') as [number];
      return { kind: 'constant', value };
    }
  }
  return fail(GRAMMAR);
}

/** The canonical text of a spec (`uf:0,1`, `uf:q`, `tf`, `constant:0.5`), readable by parseFillSpec. */
export function formatFillSpec(spec: FillSpec): string {
  switch (spec.kind) {
    case 'uf':
    case 'ui':
      return `${spec.kind}:${num(spec.min)},${num(spec.max)}`;
    case 'nf':
    case 'ni':
      return `${spec.kind}:${num(spec.mean)},${num(spec.stddev)}`;
    case 'ufq':
      return 'uf:q';
    case 'tf':
      return 'tf';
    case 'constant':
      return `constant:${num(spec.value)}`;
  }
}

/** String() round-trips every double through Number() except −0. */
function num(x: number): string {
  return Object.is(x, -0) ? '-0' : String(x);
}

/**
 * The values a fill produces for `count` elements, before rounding to a dtype (`dtype` is
 * needed only by `uf:q`, for its range). Same spec and seed ⇒ same values, on every machine
 * (see Prng). Uses one Prng per call, started from `seed`.
 */
export function fillValues(spec: FillSpec | string, count: number, seed: Seed, dtype?: DType): Float64Array {
  const s = typeof spec === 'string' ? parseFillSpec(spec) : spec;
  if (!Number.isSafeInteger(count) || count < 0) throw new ArgumentError('fillValues', 'count must be a non-negative integer', count);
  const prng = new Prng(seed);
  const out = new Float64Array(count);
  switch (s.kind) {
    case 'uf':
      for (let i = 0; i < count; i++) out[i] = prng.nextRange(s.min, s.max);
      break;
    case 'ui': {
      const lo = Math.ceil(s.min);
      const hi = Math.floor(s.max);
      for (let i = 0; i < count; i++) out[i] = prng.nextInt(lo, hi);
      break;
    }
    case 'nf':
      for (let i = 0; i < count; i++) out[i] = s.mean + s.stddev * prng.nextNormal();
      break;
    case 'ni':
      for (let i = 0; i < count; i++) out[i] = roundHalfAway(s.mean + s.stddev * prng.nextNormal());
      break;
    case 'ufq': {
      if (dtype === undefined) throw new ArgumentError('fillValues', 'uf:q needs the dtype (its range is ±dtype max)');
      for (let i = 0; i < count; i++) out[i] = prng.nextRange(-dtype.max, dtype.max);
      break;
    }
    case 'tf':
      for (let i = 0; i < count; i++) out[i] = Math.cos(i);
      break;
    case 'constant':
      out.fill(s.value);
      break;
  }
  return out;
}

/**
 * Fills `tensor` (any view; elements in row-major logical order) with `spec` from `seed`, and
 * returns it. Values are rounded to the dtype with saturation (out-of-range values clamp to
 * ±max instead of turning into Inf/NaN); for integer dtypes they are first rounded to the nearest
 * integer and clamped to the dtype's range.
 * Postconditions (tested): reproducible; integer-valued kinds (`ui`, `ni`) store integers that
 * the dtype represents exactly; a view is filled exactly like a contiguous tensor of its shape.
 */
export function fillTensor(tensor: HostTensor, spec: FillSpec | string, seed: Seed): HostTensor {
  const values = fillValues(spec, tensor.size, seed, tensor.dtype);
  const { dtype } = tensor;
  if (dtype.kind === 'int') {
    for (let i = 0; i < values.length; i++) values[i] = Math.min(dtype.max, Math.max(dtype.lowest, roundHalfAway(values[i]!)));
  }
  const saturate = { saturate: true };
  tensor.forEachOffset((off, flat) => setStorageElement(dtype, tensor.storage, off, values[flat]!, saturate));
  return tensor;
}

/** std::round: ties away from zero; `+ 0` turns −0 into +0. */
function roundHalfAway(x: number): number {
  return (x < 0 ? -Math.round(-x) : Math.round(x)) + 0;
}
