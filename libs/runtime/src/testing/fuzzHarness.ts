// The harness of the invalid-argument fuzz specs (CI, with the fake addon) and their GPU replays
// (real addon): device buffers described as data (so one generated argument set can be replayed on
// any device), random corruptions of a valid call, and the check that a corrupted call is rejected
// with a typed ArgumentError before anything is launched or compiled. Shared by every kernel
// package's fuzz specs through `@tilekit/runtime/testing` (with `@tilekit/runtime/testing/fuzzAddonPath`).
import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import { NO_RESOURCES, type CompileResult, type Compiler, type Device, type DeviceBuffer, type DeviceRange } from '../index.ts';
import { createFakeAddon } from './fakeAddon.ts';

/** The fake addon the fuzz specs run against (see `fuzzAddonPath.ts`). */
export type FuzzFakeAddon = ReturnType<typeof createFakeAddon>;

/** Installs a fresh fake addon behind the shim of `fuzzAddonPath.ts` (import that module first). */
export function useFuzzFakeAddon(): FuzzFakeAddon {
  const fake = createFakeAddon({ totalMemory: 2 ** 33 });
  (globalThis as { __tilekitFuzzAddon?: unknown }).__tilekitFuzzAddon = fake;
  return fake;
}

/** Removes the fake installed by `useFuzzFakeAddon`. */
export function dropFuzzFakeAddon(): void {
  delete (globalThis as { __tilekitFuzzAddon?: unknown }).__tilekitFuzzAddon;
}

/** `compiler` with every compile request counted in `counter` (the GPU replays: nothing rejected may compile). */
export function countingCompiler(compiler: Compiler, counter: { compiles: number }): Compiler {
  return {
    kind: compiler.kind,
    version: () => compiler.version(),
    compile: (request) => {
      counter.compiles++;
      return compiler.compile(request);
    },
  };
}

/** A compiler that compiles nothing: it counts requests and makes the fake driver know each entry name. */
export function fakeCompiler(fake: FuzzFakeAddon, counter: { compiles: number }): Compiler {
  return {
    kind: 'nvcc',
    version: () => Promise.resolve('fuzz-fake'),
    compile: (request) => {
      counter.compiles++;
      fake.kernels.set(request.name, { params: null });
      const cubin = new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0x33]);
      return Promise.resolve({
        cubin,
        log: '',
        resources: NO_RESOURCES,
        functions: { [request.name]: NO_RESOURCES },
        resourcesReported: false,
      } as unknown as CompileResult);
    },
  };
}

/** `instance` with a stub source: building it through a fake compiler costs no code emission. */
export function withoutSource<I extends { source(): string }>(instance: I): I {
  return Object.create(instance, { source: { value: () => '// fuzz: not compiled' } }) as I;
}

/**
 * One device buffer of a call, as data: an allocation of `offset + bytes` viewed from `offset`
 * (`offset` > 0 misaligns it), a view of another buffer's allocation (`alias`: overlapping memory),
 * no buffer at all, or an object that is not a device range.
 */
export type BufferPlan =
  | { readonly kind: 'alloc'; readonly bytes: number; readonly offset: number }
  | { readonly kind: 'alias'; readonly of: string; readonly offset: number; readonly bytes: number }
  | { readonly kind: 'absent' }
  | { readonly kind: 'notBuffer' };

/** A fresh allocation of exactly `bytes`. */
export function allocPlan(bytes: number): BufferPlan {
  return { kind: 'alloc', bytes, offset: 0 };
}

/** Buffers allocated (and their views) for one call; `dispose` frees the allocations. */
export interface MaterializedBuffers {
  readonly ranges: Readonly<Record<string, DeviceBuffer | DeviceRange | undefined>>;
  dispose(): void;
}

/** Allocates the buffers `plans` describe on `device` (aliases after the buffers they view). */
export function materialize(device: Device, plans: Readonly<Record<string, BufferPlan>>): MaterializedBuffers {
  const roots = new Map<string, DeviceBuffer>();
  const ranges: Record<string, DeviceBuffer | DeviceRange | undefined> = {};
  for (const [name, plan] of Object.entries(plans)) {
    if (plan.kind !== 'alloc') continue;
    const root = device.alloc(Math.max(1, plan.offset + plan.bytes));
    roots.set(name, root);
    ranges[name] = plan.offset === 0 && plan.bytes === root.bytes ? root : root.view(plan.offset, plan.bytes);
  }
  const extra: DeviceBuffer[] = [];
  for (const [name, plan] of Object.entries(plans)) {
    if (plan.kind === 'alias') ranges[name] = aliasView(device, roots, plan, extra);
    else if (plan.kind === 'notBuffer') ranges[name] = { ptr: 4096, bytes: 1 << 20 } as unknown as DeviceRange;
  }
  return { ranges, dispose: () => [...roots.values(), ...extra].forEach((r) => r.dispose()) };
}

/** A view of `plan.of`'s allocation; a buffer of its own when that one is no allocation (corrupted too). */
function aliasView(
  device: Device,
  roots: ReadonlyMap<string, DeviceBuffer>,
  plan: Extract<BufferPlan, { kind: 'alias' }>,
  extra: DeviceBuffer[],
): DeviceBuffer {
  const root = roots.get(plan.of);
  if (root === undefined) {
    const own = device.alloc(Math.max(1, plan.bytes));
    extra.push(own);
    return own;
  }
  const offset = Math.min(plan.offset, root.bytes - 1);
  return root.view(offset, Math.min(plan.bytes, root.bytes - offset));
}

/** One corruption of a call: what it breaks (`target`, one per call) and how. */
export interface Corruption<C> {
  readonly target: string;
  readonly label: string;
  apply(call: C): C;
}

/** A generated invalid argument set: the valid call it started from and the corruptions applied to it. */
export interface InvalidCall<C> {
  readonly base: C;
  readonly call: C;
  readonly labels: readonly string[];
  /** What the corruptions broke (their `target`s). */
  readonly targets: readonly string[];
}

/**
 * Valid calls from `base`, each with one to three corruptions of distinct targets applied in order:
 * mostly one (a corruption the validator misses is only seen alone), else two or three.
 */
export function invalidCalls<C>(
  base: fc.Arbitrary<C>,
  corruptions: (call: C) => readonly fc.Arbitrary<Corruption<C>>[],
): fc.Arbitrary<InvalidCall<C>> {
  const count = fc.oneof({ weight: 3, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.integer({ min: 2, max: 3 }) });
  return fc.tuple(base, count).chain(([b, n]) =>
    fc.uniqueArray(fc.oneof(...corruptions(b)), { minLength: n, maxLength: n, selector: (c) => c.target }).map((cs) => ({
      base: b,
      call: cs.reduce((call, c) => c.apply(call), b),
      labels: cs.map((c) => c.label),
      targets: cs.map((c) => c.target),
    })),
  );
}

/** Replaces one buffer's plan. */
export function withBuffer<C extends { readonly buffers: Readonly<Record<string, BufferPlan>> }>(
  call: C,
  name: string,
  plan: BufferPlan,
): C {
  return { ...call, buffers: { ...call.buffers, [name]: plan } };
}

/**
 * Values no positive size may take: zero, negative, fractional, non-finite, huge, not numbers (not
 * null: an optional field given null takes its default, as `??` reads it; required fields add it).
 */
export const BAD_SIZES: readonly unknown[] = [0, -1, -64, 1.5, 0.25, Number.NaN, Infinity, -Infinity, 2 ** 53, 1e300, '8', true];

/** The buffer corruptions every launcher must reject: too small, misaligned, missing, not a buffer, overlapping `overlaps`. */
export function bufferCorruptions<C extends { readonly buffers: Readonly<Record<string, BufferPlan>> }>(
  name: string,
  spec: { readonly need: number; readonly align: number; readonly overlaps?: readonly string[]; readonly optional?: boolean },
): fc.Arbitrary<Corruption<C>>[] {
  const out: fc.Arbitrary<Corruption<C>>[] = [
    fc.constant({ target: name, label: `${name} not a device buffer`, apply: (c: C) => withBuffer(c, name, { kind: 'notBuffer' }) }),
  ];
  if (spec.need > 0) {
    out.push(
      fc.integer({ min: 0, max: spec.need - 1 }).map((bytes) => ({
        target: name,
        label: `${name} ${bytes} of ${spec.need} bytes`,
        apply: (c: C) => withBuffer(c, name, { kind: 'alloc', bytes, offset: 0 }),
      })),
    );
    if (!spec.optional)
      out.push(fc.constant({ target: name, label: `${name} missing`, apply: (c: C) => withBuffer(c, name, { kind: 'absent' }) }));
  }
  const offsets = [1, 2, 4, 8].filter((o) => o % spec.align !== 0);
  if (offsets.length > 0 && spec.need > 0) {
    out.push(
      fc.constantFrom(...offsets).map((offset) => ({
        target: name,
        label: `${name} at offset ${offset} (needs ${spec.align}-byte alignment)`,
        apply: (c: C) => withBuffer(c, name, { kind: 'alloc', bytes: spec.need, offset }),
      })),
    );
  }
  for (const other of spec.overlaps ?? []) {
    out.push(
      fc.constant({
        target: name,
        label: `${name} aliasing ${other}`,
        apply: (c: C) => withBuffer(c, name, { kind: 'alias', of: other, offset: 0, bytes: spec.need }),
      }),
    );
  }
  return out;
}

/** What every rejected call is checked for. */
export interface RejectionCounters {
  /** Kernel launches so far (the fake's recorded launches, or the runtime's launch journal on a GPU). */
  launches(): number;
  /** Compile requests so far. */
  compiles(): number;
}

/** Invalid argument sets tried and what came of them (printed as the spec's summary line). */
export interface FuzzTally {
  sets: number;
  typed: number;
  launches: number;
  /** Compiles during calls rejected for anything but a buffer checked after building (must stay 0). */
  compiles: number;
  /** How often each argument was named (by its leading name: `problem.seqstartQ[3]` counts as `problem.seqstartQ`). */
  readonly named: Map<string, number>;
}

export function newTally(): FuzzTally {
  return { sets: 0, typed: 0, launches: 0, compiles: 0, named: new Map() };
}

/**
 * `fuzz <name>: 1000 invalid argument sets, 1000 typed errors, 0 launches, 0 compiles`, then the
 * arguments the errors named, most often first (what the corruptions reached).
 */
export function fuzzLine(name: string, t: FuzzTally): string {
  const named = [...t.named].sort((x, y) => y[1] - x[1]).map(([a, n]) => `${a} ${n}`);
  const counts = `${t.sets} invalid argument sets, ${t.typed} typed errors, ${t.launches} launches, ${t.compiles} compiles`;
  return `fuzz ${name}: ${counts}\n  arguments named: ${named.join(', ')}`;
}

/** How `expectRejected` judges a rejection. */
export interface RejectionRules {
  /** The error class (default ArgumentError). */
  readonly errorClass?: abstract new (...args: never[]) => ArgumentError;
  /**
   * Buffers an entry point checks only after building its kernels (a runner given a valid problem):
   * compiles are allowed when every problem names one of them, never otherwise.
   */
  readonly checkedAfterBuild?: readonly string[];
}

/**
 * Runs `call`, which must throw an `errorClass` (an ArgumentError) whose every problem names an
 * argument and a rule, having launched nothing and compiled nothing (but see `checkedAfterBuild`).
 * Throws an Error describing what went wrong otherwise (fast-check then reports the argument set).
 * Updates `tally`.
 */
export async function expectRejected(
  call: () => unknown,
  counters: RejectionCounters,
  tally: FuzzTally,
  what: string,
  rules: RejectionRules = {},
): Promise<ArgumentError> {
  const errorClass = rules.errorClass ?? ArgumentError;
  const before = { launches: counters.launches(), compiles: counters.compiles() };
  tally.sets++;
  let error: unknown;
  try {
    await call();
  } catch (e) {
    error = e;
  }
  const launched = counters.launches() - before.launches;
  const compiled = counters.compiles() - before.compiles;
  tally.launches += launched;
  if (error === undefined) throw new Error(`accepted (a validation gap): ${what}`);
  if (!(error instanceof errorClass))
    throw new Error(
      `${what}: threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}, not a ${errorClass.name}`,
      { cause: error },
    );
  const bad = error.problems.filter(
    (p) => typeof p.argument !== 'string' || p.argument === '' || typeof p.rule !== 'string' || p.rule === '',
  );
  if (error.problems.length === 0 || bad.length > 0)
    throw new Error(`${what}: a problem without argument or rule: ${JSON.stringify(error.problems)}`);
  if (launched > 0) throw new Error(`${what}: ${launched} launches before the error (${error.message})`);
  const afterBuild = rules.checkedAfterBuild ?? [];
  const buffersOnly = error.problems.every((p) => afterBuild.includes(p.argument));
  if (!buffersOnly) tally.compiles += compiled;
  if (compiled > 0 && !buffersOnly) throw new Error(`${what}: ${compiled} compiles before the error (${error.message})`);
  tally.typed++;
  for (const p of error.problems) {
    const key = p.argument.replace(/\[\d+\]/g, '');
    tally.named.set(key, (tally.named.get(key) ?? 0) + 1);
  }
  return error;
}

/**
 * The fuzz loop every launcher spec runs: `numRuns` (default 1000) invalid calls drawn from `invalid` with `seed`, each
 * through `run` and judged by {@link expectRejected}; returns the tally for the spec's summary line and assertions.
 */
export async function fuzzInvalidCalls<C>(
  invalid: fc.Arbitrary<InvalidCall<C>>,
  run: (call: C) => unknown,
  counters: RejectionCounters,
  options: { readonly seed: number; readonly numRuns?: number; readonly rules?: RejectionRules },
): Promise<FuzzTally> {
  const tally = newTally();
  await fc.assert(
    fc.asyncProperty(invalid, async ({ call, labels }) => {
      await expectRejected(() => run(call), counters, tally, labels.join('; '), options.rules);
    }),
    { numRuns: options.numRuns ?? 1000, seed: options.seed },
  );
  return tally;
}
