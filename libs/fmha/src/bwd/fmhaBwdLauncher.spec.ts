import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { causalTopLeft } from '../mask/attentionMaskSpec.ts';
import { FmhaBwdArgsError, type FmhaBwdArgs } from './fmhaBwdArgs.ts';
import { FmhaBwdCatalogError, fmhaBwdTripleMismatches } from './fmhaBwdRecord.ts';
import { FmhaBwdLauncher, type FmhaBwdExecutor, type FmhaBwdStage, type FmhaBwdStageLaunch } from './fmhaBwdLauncher.ts';
import { checkFmhaBwdTraits, FmhaBwdTraitsError, type FmhaBwdTraits } from './fmhaBwdTraits.ts';
import { bwdCatalog, bwdTraitsArb, bwdTriple } from './testing/bwdArbitraries.ts';

/** The device as the launcher sees it: per buffer, the metadata at its head and the state of dq_acc. */
interface FakeBuffer {
  readonly ptr: bigint;
  readonly bytes: number;
  head: Uint8Array | null;
  acc: 'garbage' | 'zero' | 'used';
}

/** A fake executor that checks every launch against the device state (the model's postcondition). */
class FakeDevice implements FmhaBwdExecutor<string> {
  readonly buffers: FakeBuffer[] = [];
  readonly stages: FmhaBwdStage[] = [];
  readonly streams = new Set<string>();
  violations: string[] = [];

  allocate(bytes: number): FakeBuffer {
    const last = this.buffers[this.buffers.length - 1];
    const ptr = last === undefined ? 0x10000n : last.ptr + BigInt(Math.ceil((last.bytes + 1) / 256) * 256);
    const b: FakeBuffer = { ptr, bytes, head: null, acc: 'garbage' };
    this.buffers.push(b);
    return b;
  }

  #find(ptr: bigint): FakeBuffer {
    const b = this.buffers.find((x) => ptr >= x.ptr && ptr < x.ptr + BigInt(Math.max(x.bytes, 1)));
    if (b === undefined) throw new Error(`no buffer at 0x${ptr.toString(16)}`);
    return b;
  }

  copyToDevice(dst: bigint, bytes: Uint8Array, stream: string): void {
    const b = this.#find(dst);
    if (dst !== b.ptr) this.violations.push('metadata not at the head');
    if (bytes.length > b.bytes) this.violations.push('metadata overflows');
    b.head = bytes.slice();
    this.streams.add(stream);
  }

  fillZero(dst: bigint, byteCount: number, stream: string): void {
    const b = this.#find(dst);
    if (dst + BigInt(byteCount) > b.ptr + BigInt(b.bytes)) this.violations.push('zeroing overflows');
    b.acc = 'zero';
    this.streams.add(stream);
  }

  launch(l: FmhaBwdStageLaunch, stream: string): void {
    this.stages.push(l.stage);
    this.streams.add(stream);
    if (l.stage !== 'dqDkDv' || l.workspace.totalBytes === 0) return;
    const b = this.#find(l.args.workspace);
    const want = l.workspace.hostImage();
    if (b.head === null || b.head.length !== want.length || !b.head.every((v, i) => v === want[i]))
      this.violations.push('dq_dk_dv found foreign metadata');
    if (l.workspace.needsZeroDqAcc && b.acc !== 'zero') this.violations.push(`dq_dk_dv found a ${b.acc} dq_acc`);
    if (l.instance.kN0 !== l.workspace.kN0) this.violations.push('kN0 of the workspace differs from the instance');
    b.acc = 'used';
  }
}

function argsFor(traits: FmhaBwdTraits, workspace: bigint): FmhaBwdArgs {
  const t = (ptr: bigint) => ({ ptr, strides: { batch: 0, head: 64, row: 512 } });
  const rows = (ptr: bigint) => ({ ptr, strides: { batch: 0, head: 100 } });
  return {
    q: t(0x100n),
    k: t(0x200n),
    v: t(0x300n),
    o: t(0x400n),
    dO: t(0x500n),
    lse: rows(0x600n),
    d: rows(0x700n),
    dQ: t(0x800n),
    dK: t(0x900n),
    dV: t(0xa00n),
    scale: 0.125,
    workspace,
    ...(traits.groupMode ? { seqstartQ: 0xb00n, seqstartK: 0xc00n } : {}),
  };
}

interface Model {
  prepared: Set<number>;
}
interface Real {
  launcher: FmhaBwdLauncher<string>;
  device: FakeDevice;
  buffers: FakeBuffer[];
  warnings: string[];
  traits: FmhaBwdTraits;
}

class Prepare implements fc.Command<Model, Real> {
  readonly index: number;
  constructor(index: number) {
    this.index = index;
  }
  check(): boolean {
    return true;
  }
  run(m: Model, r: Real): void {
    const calls = r.device.stages.length;
    const done = r.launcher.prepareWorkspace(r.buffers[this.index]!, 's0');
    expect(done).toBe(r.launcher.supported);
    expect(r.device.stages.length).toBe(calls);
    if (r.launcher.supported) m.prepared.add(this.index);
    else expect(r.warnings.length).toBeGreaterThan(1);
  }
  toString(): string {
    return `prepare(${this.index})`;
  }
}

class Run implements fc.Command<Model, Real> {
  readonly index: number;
  constructor(index: number) {
    this.index = index;
  }
  check(): boolean {
    return true;
  }
  run(m: Model, r: Real): void {
    const size = r.launcher.workspaceSize.total;
    const ws = size === 0 ? 0n : r.buffers[this.index]!.ptr;
    const args = argsFor(r.traits, ws);
    const before = r.device.stages.length;
    if (!r.launcher.supported) {
      expect(r.launcher.run(args, 's1')).toBe(false);
      expect(r.device.stages.length).toBe(before);
      return;
    }
    if (size > 0 && !m.prepared.has(this.index)) {
      expect(() => r.launcher.run(args, 's1')).toThrow(/args\.workspace: must be a buffer prepared by this launcher/);
      return;
    }
    expect(r.launcher.run(args, 's1')).toBe(true);
    const direct = r.launcher.triple!.convertDq === null;
    expect(r.device.stages.slice(before)).toEqual(direct ? ['dotDoO', 'dqDkDv'] : ['dotDoO', 'dqDkDv', 'convertDq']);
    expect(r.device.violations).toEqual([]);
  }
  toString(): string {
    return `run(${this.index})`;
  }
}

describe('FmhaBwdLauncher', () => {
  it('lifecycle model (fc.commands): any order of prepare/run over two buffers — every dq_dk_dv launch finds its metadata and, when required, a zeroed dq_acc; unprepared buffers are refused; unsupported launchers do nothing', () => {
    const catalog = bwdCatalog();
    fc.assert(
      fc.property(
        bwdTraitsArb,
        fc.integer({ min: 1, max: 200 }),
        fc.commands([fc.nat(1).map((i) => new Prepare(i)), fc.nat(1).map((i) => new Run(i))], { maxCommands: 12 }),
        (traits, smCount, cmds) => {
          const device = new FakeDevice();
          const warnings: string[] = [];
          const launcher = new FmhaBwdLauncher<string>(traits, { catalog, executor: device, smCount, warn: (w) => warnings.push(w) });
          expect(warnings.length).toBe(launcher.supported ? 0 : 1);
          const size = launcher.workspaceSize;
          expect(size.total).toBe(size.host + size.device);
          const buffers = [device.allocate(Math.max(size.total, 16)), device.allocate(size.total + 64)];
          fc.modelRun(() => ({ model: { prepared: new Set<number>() }, real: { launcher, device, buffers, warnings, traits } }), cmds);
          expect(device.violations).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('selects the first triple whose predicates hold and sizes the workspace from ITS kN0', () => {
    const traits: FmhaBwdTraits = {
      batch: 2,
      nheadQ: 4,
      nheadK: 2,
      hdimQ: 128,
      hdimV: 128,
      dtype: 'fp16',
      groupMode: true,
      deterministic: true,
      seqlenQ: 10,
      seqlenK: 300,
      maxSeqlenQ: 6,
      maxSeqlenK: 200,
      seqstartQ: [0, 4, 10],
      seqstartK: [0, 200, 300],
      mask: causalTopLeft,
    };
    const noMaskOnly = bwdTriple({
      dtype: 'fp16',
      hdimQ: 128,
      hdimV: 128,
      groupMode: true,
      dqAccumulation: 'splitStore',
      kN0: 16,
      masks: ['none'],
    });
    const small = bwdTriple({ dtype: 'fp16', hdimQ: 128, hdimV: 128, groupMode: true, dqAccumulation: 'splitStore', kN0: 32 });
    const big = bwdTriple({ dtype: 'fp16', hdimQ: 128, hdimV: 128, groupMode: true, dqAccumulation: 'splitStore', kN0: 128 });
    const device = new FakeDevice();
    const l = new FmhaBwdLauncher(traits, { catalog: [noMaskOnly, small, big], executor: device, smCount: 132 });
    expect(l.supported).toBe(true);
    expect(l.triple).toBe(small);
    expect(l.workspace!.nsplits).toEqual([7, 4]);
    expect(new FmhaBwdLauncher(traits, { catalog: [big, small], executor: device, smCount: 132 }).workspace!.nsplits).toEqual([2, 1]);
    // A direct (QrQtrDor) pipeline needs no workspace, only while maxSeqlenQ fits it.
    const direct = bwdTriple({ dtype: 'fp16', hdimQ: 128, hdimV: 128, groupMode: true, dqAccumulation: 'direct', kN0: 128, maxSeqlenQ: 8 });
    const d = new FmhaBwdLauncher(traits, { catalog: [direct, big], executor: device, smCount: 132 });
    expect(d.triple).toBe(direct);
    expect(d.workspaceSize).toEqual({ host: 0, device: 0, total: 0 });
    expect(
      new FmhaBwdLauncher({ ...traits, maxSeqlenQ: 9, seqstartQ: [0, 9, 10] }, { catalog: [direct, big], executor: device, smCount: 132 })
        .triple,
    ).toBe(big);
  });

  it('an unmatched configuration yields an unsupported launcher naming the unmatched traits, not an exception', () => {
    const warnings: string[] = [];
    const device = new FakeDevice();
    const traits: FmhaBwdTraits = {
      batch: 1,
      nheadQ: 2,
      nheadK: 2,
      hdimQ: 96,
      hdimV: 96,
      dtype: 'bf16',
      groupMode: false,
      deterministic: false,
      seqlenQ: 64,
      seqlenK: 64,
      maxSeqlenQ: 64,
      maxSeqlenK: 64,
      hasDropout: true,
    };
    const l = new FmhaBwdLauncher(traits, { catalog: bwdCatalog(), executor: device, smCount: 132, warn: (w) => warnings.push(w) });
    expect(l.supported).toBe(false);
    expect(l.triple).toBeNull();
    expect(l.workspaceSize).toEqual({ host: 0, device: 0, total: 0 });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/unmatched hdimQ, hdimV, hasDropout/);
    expect(l.mismatches.map((m) => m.trait)).toEqual(['hdimQ', 'hdimV', 'hasDropout']);
    expect(l.prepareWorkspace({ ptr: 0x1000n, bytes: 1 << 20 }, 's')).toBe(false);
    expect(l.run(argsFor(traits, 0n), 's')).toBe(false);
    expect(device.stages).toEqual([]);
    expect(warnings).toHaveLength(3);
    const empty = new FmhaBwdLauncher(traits, { catalog: [], executor: device, smCount: 132, warn: (w) => warnings.push(w) });
    expect(empty.supported).toBe(false);
    expect(warnings[3]).toMatch(/catalog is empty/);
  });

  it('property: supported ⇔ some catalog triple has no mismatch; a supported launcher’s triple has none', () => {
    const catalog = bwdCatalog();
    fc.assert(
      fc.property(bwdTraitsArb, (traits) => {
        const l = new FmhaBwdLauncher(traits, { catalog, executor: new FakeDevice(), smCount: 132, warn: () => {} });
        const t = checkFmhaBwdTraits(traits);
        expect(l.supported).toBe(catalog.some((c) => fmhaBwdTripleMismatches(c, t).length === 0));
        if (l.supported) expect(fmhaBwdTripleMismatches(l.triple!, t)).toEqual([]);
        else expect(l.mismatches.length).toBeGreaterThan(0);
      }),
    );
  });

  it('bad traits, catalogs, buffers and args are typed errors naming them', () => {
    const device = new FakeDevice();
    const traits: FmhaBwdTraits = {
      batch: 2,
      nheadQ: 4,
      nheadK: 4,
      hdimQ: 64,
      hdimV: 64,
      dtype: 'fp16',
      groupMode: false,
      deterministic: false,
      seqlenQ: 128,
      seqlenK: 128,
      maxSeqlenQ: 128,
      maxSeqlenK: 128,
    };
    const catalog = bwdCatalog();
    expect(() => new FmhaBwdLauncher({ ...traits, nheadK: 3 }, { catalog, executor: device, smCount: 132 })).toThrow(FmhaBwdTraitsError);
    const broken = bwdTriple({ dtype: 'fp16', hdimQ: 64, hdimV: 64, groupMode: false, dqAccumulation: 'atomic', kN0: 128 });
    expect(() => new FmhaBwdLauncher(traits, { catalog: [{ ...broken, convertDq: null }], executor: device, smCount: 132 })).toThrow(
      FmhaBwdCatalogError,
    );
    expect(
      () =>
        new FmhaBwdLauncher(traits, {
          catalog: [{ ...broken, convertDq: { ...broken.convertDq!, deterministic: true } }],
          executor: device,
          smCount: 132,
        }),
    ).toThrow(/catalog\[0\]\.convertDq\.deterministic: must be false/);
    expect(
      () =>
        new FmhaBwdLauncher(traits, { catalog: [{ ...broken, dotDoO: { ...broken.dotDoO, hdimV: 32 } }], executor: device, smCount: 132 }),
    ).toThrow(/catalog\[0\]\.dotDoO\.hdimV/);
    expect(() => new FmhaBwdLauncher(traits, { catalog, executor: device, smCount: 0 })).toThrow(/options\.smCount/);
    const l = new FmhaBwdLauncher(traits, { catalog, executor: device, smCount: 132 });
    const buf = device.allocate(l.workspaceSize.total);
    expect(() => l.prepareWorkspace({ ptr: buf.ptr, bytes: l.workspaceSize.total - 1 }, 's')).toThrow(
      /deviceBuffer\.bytes: must be at least/,
    );
    expect(() => l.prepareWorkspace({ ptr: buf.ptr + 8n, bytes: l.workspaceSize.total }, 's')).toThrow(
      /deviceBuffer\.ptr: must be a non-null address aligned to 16/,
    );
    l.prepareWorkspace(buf, 's');
    const args = argsFor(traits, buf.ptr);
    expect(() => l.run({ ...args, workspace: 0n }, 's')).toThrow(/args\.workspace: is required/);
    expect(() => l.run({ ...args, scale: NaN }, 's')).toThrow(FmhaBwdArgsError);
    expect(() => l.run({ ...args, dQ: { ...args.dQ, ptr: 0n } }, 's')).toThrow(/args\.dQ\.ptr: is required/);
    expect(() => l.run({ ...args, seqstartQ: 0x10n }, 's')).toThrow(/args\.seqstartQ: must be omitted \(batch mode\)/);
    expect(() => l.run({ ...args, bias: args.q }, 's')).toThrow(/args\.bias: must be omitted/);
    expect(() => l.run({ ...args, workspace: 0x999990n }, 's')).toThrow(ArgumentError);
    expect(l.run(args, 's')).toBe(true);
  });
});

describe('checkFmhaBwdTraits', () => {
  const base: FmhaBwdTraits = {
    batch: 2,
    nheadQ: 4,
    nheadK: 2,
    hdimQ: 64,
    hdimV: 64,
    dtype: 'fp16',
    groupMode: true,
    deterministic: true,
    seqlenQ: 10,
    seqlenK: 12,
    maxSeqlenQ: 6,
    maxSeqlenK: 8,
    seqstartQ: [0, 4, 10],
    seqstartK: [0, 8, 12],
  };

  it('accepts generated traits and fills the defaults', () => {
    fc.assert(
      fc.property(bwdTraitsArb, (traits) => {
        const t = checkFmhaBwdTraits(traits);
        expect(Object.isFrozen(t)).toBe(true);
        expect(t.bias).toBe('none');
        expect(t.seqstartQ.length).toBe(traits.groupMode ? traits.batch + 1 : 0);
      }),
    );
    expect(checkFmhaBwdTraits({ ...base, mask: 'b:3,0' }).mask).toEqual({ kind: 'window', alignment: 'bottomRight', left: 3, right: 0 });
  });

  it('names the broken trait and the rule', () => {
    const cases: [Partial<FmhaBwdTraits>, RegExp][] = [
      [{ dtype: 'fp32' as never }, /traits\.dtype: must be one of fp16, bf16/],
      [{ nheadK: 3 }, /traits\.nheadK: must divide nheadQ = 4/],
      [{ batch: 0 }, /traits\.batch: must be an integer in \[1, 65535\]/],
      [{ seqstartQ: [0, 4] }, /traits\.seqstartQ: must be an array of batch \+ 1 = 3/],
      [{ seqstartK: [1, 8, 12] }, /traits\.seqstartK\[0\]: must be 0/],
      [{ seqstartK: [0, 8, 7], seqlenK: 7 }, /traits\.seqstartK: must be non-decreasing/],
      [{ seqlenQ: 11 }, /traits\.seqlenQ: must be the total physical query rows seqstartQ\[2\] = 10/],
      [{ maxSeqlenK: 9 }, /traits\.maxSeqlenK: must be at most the longest physical key slot 8/],
      [{ seqstartQ: undefined } as never, /traits\.seqstartQ: is required in group mode/],
      [{ groupMode: false }, /traits\.seqstartQ: is only for group mode/],
      [{ mask: 'q' }, /traits\.mask: must be a valid mask/],
      [{ bias: 'alibi', hasDbias: true }, /traits\.hasDbias: needs bias = elementwise/],
      [{ storeRandval: true }, /traits\.storeRandval: needs hasDropout/],
      [{ deterministic: 1 as never }, /traits\.deterministic: must be a boolean/],
    ];
    for (const [change, message] of cases) expect(() => checkFmhaBwdTraits({ ...base, ...change })).toThrow(message);
    const { seqstartQ: _q, seqstartK: _k, ...batchBase } = base;
    expect(() => checkFmhaBwdTraits({ ...batchBase, groupMode: false, seqlenQ: 5, seqlenK: 5, maxSeqlenQ: 4, maxSeqlenK: 5 })).toThrow(
      /traits\.maxSeqlenQ: must equal seqlenQ = 5 in batch mode/,
    );
    expect(() => checkFmhaBwdTraits(null as never)).toThrow(FmhaBwdTraitsError);
  });
});
