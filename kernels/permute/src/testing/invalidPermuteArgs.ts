// Random invalid argument sets of the permute launcher (`PermuteKernel.run`): a random valid call
// (a problem, the instance dispatch picks for it, src/dst of exactly the bytes it moves) with one to
// three corruptions — bad kinds, dtypes and sizes, sizes the buffers do not hold, buffers too
// small, misaligned, missing, not buffers, or overlapping. Used by the CI fuzz spec (fake addon)
// and replayed on a GPU.
import fc from 'fast-check';
import { NoInstanceError } from '@tilekit/codegen';
import { findPermuteInstance } from '../permuteCatalog.ts';
import { selectPermuteInstance } from '../permuteDispatch.ts';
import type { PermuteInstance } from '../permuteInstance.ts';
import {
  elementBytes,
  permuteElements,
  PERMUTE_DTYPES,
  PERMUTE_KINDS,
  type PermuteDType,
  type PermuteKind,
  type PermuteProblem,
} from '../permuteProblem.ts';
import {
  allocPlan,
  BAD_SIZES,
  bufferCorruptions,
  invalidCalls,
  type BufferPlan,
  type Corruption,
  type InvalidCall,
} from '@tilekit/runtime/testing';

/** One permute call as data: the problem (possibly corrupted), the instance run (by name), the buffers. */
export interface PermuteFuzzCall {
  readonly problem: Readonly<Record<string, unknown>>;
  readonly instance: string;
  readonly buffers: Readonly<Record<'src' | 'dst', BufferPlan>>;
}

/** Which valid calls to start from (default: every kind and dtype, the dispatched instance). */
export interface PermuteFuzzOptions {
  readonly kinds?: readonly PermuteKind[];
  readonly dtypes?: readonly PermuteDType[];
  /** The instance to run (problems it cannot run are skipped); default: dispatch's choice. */
  readonly instance?: PermuteInstance;
}

function problems(o: PermuteFuzzOptions): fc.Arbitrary<PermuteProblem> {
  const dtype = fc.constantFrom(...(o.dtypes ?? PERMUTE_DTYPES));
  return fc.constantFrom(...(o.kinds ?? PERMUTE_KINDS)).chain((kind): fc.Arbitrary<PermuteProblem> =>
    kind === 'transpose'
      ? fc.record({ kind: fc.constant(kind), dtype, m: fc.integer({ min: 1, max: 96 }), n: fc.integer({ min: 1, max: 96 }) })
      : fc.record({
          kind: fc.constant(kind),
          dtype,
          b: fc.integer({ min: 1, max: 3 }),
          h: fc.integer({ min: 1, max: 6 }),
          s: fc.integer({ min: 1, max: 40 }),
          d: fc.integer({ min: 1, max: 160 }),
        }),
  );
}

function instanceFor(p: PermuteProblem, o: PermuteFuzzOptions): PermuteInstance | undefined {
  if (o.instance !== undefined) return o.instance.unsupported(p).length === 0 ? o.instance : undefined;
  try {
    return selectPermuteInstance(p);
  } catch (e) {
    if (e instanceof NoInstanceError) return undefined;
    throw e;
  }
}

/** Valid calls: a problem, an instance that runs it, src and dst of exactly its bytes. */
export function validPermuteCalls(o: PermuteFuzzOptions = {}): fc.Arbitrary<PermuteFuzzCall> {
  return problems(o)
    .map((p) => ({ p, instance: instanceFor(p, o) }))
    .filter((x): x is { p: PermuteProblem; instance: PermuteInstance } => x.instance !== undefined)
    .map(({ p, instance }) => {
      const bytes = permuteElements(p) * elementBytes(p);
      return {
        problem: p as unknown as Record<string, unknown>,
        instance: instance.name,
        buffers: { src: allocPlan(bytes), dst: allocPlan(bytes) },
      };
    });
}

function setField(field: string, value: unknown, label = `problem.${field} = ${String(value)}`): Corruption<PermuteFuzzCall> {
  return { target: `problem.${field}`, label, apply: (c) => ({ ...c, problem: { ...c.problem, [field]: value } }) };
}

/** The problem's corruptions: unknown kind or dtype, another dtype, a bad or grown size, the other kind's fields. */
function problemCorruptions(c: PermuteFuzzCall): fc.Arbitrary<Corruption<PermuteFuzzCall>>[] {
  const p = c.problem as unknown as PermuteProblem;
  const sizes = p.kind === 'transpose' ? ['m', 'n'] : ['b', 'h', 's', 'd'];
  return [
    fc.constantFrom('bhsd', 'BHSD2BSHD', 'permute', undefined, 3).map((v) => setField('kind', v)),
    fc
      .constantFrom<unknown>('fp8', 'int8', 'float16', undefined, 2, ...PERMUTE_DTYPES.filter((d) => d !== p.dtype))
      .map((v) => setField('dtype', v)),
    fc.tuple(fc.constantFrom(...sizes), fc.constantFrom(...BAD_SIZES, null, undefined)).map(([f, v]) => setField(f, v)),
    // A valid problem larger than the buffers (inconsistent shapes): the buffers are too small.
    fc
      .tuple(fc.constantFrom(...sizes), fc.integer({ min: 2, max: 4 }))
      .map(([f, k]) =>
        setField(f, (p as unknown as Record<string, number>)[f]! * k, `problem.${f} × ${k} (buffers sized for the original)`),
      ),
    fc.constant<Corruption<PermuteFuzzCall>>({
      target: 'problem.kind',
      label: 'the other kind, without its sizes',
      apply: (x) => ({ ...x, problem: { ...x.problem, kind: p.kind === 'transpose' ? 'bhsd2bshd' : 'transpose' } }),
    }),
  ];
}

/** The catalog instance named `name` (the calls name their instance, so that they print short). */
export function permuteInstanceNamed(name: string): PermuteInstance {
  const instance = findPermuteInstance(name);
  if (instance === undefined) throw new Error(`no permute instance ${name}`);
  return instance;
}

/** Invalid calls: a valid one with one to three corruptions of the problem or the buffers. */
export function invalidPermuteCalls(o: PermuteFuzzOptions = {}): fc.Arbitrary<InvalidCall<PermuteFuzzCall>> {
  return invalidCalls(validPermuteCalls(o), (c) => {
    const bytes = (c.buffers.src as { bytes: number }).bytes;
    const align = permuteInstanceNamed(c.instance).vectorBytes;
    return [
      ...problemCorruptions(c),
      ...bufferCorruptions<PermuteFuzzCall>('src', { need: bytes, align }),
      ...bufferCorruptions<PermuteFuzzCall>('dst', { need: bytes, align, overlaps: ['src'] }),
    ];
  });
}
