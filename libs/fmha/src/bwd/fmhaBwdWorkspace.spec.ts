import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { causalTopLeft, noMask } from '../mask/attentionMaskSpec.ts';
import { checkFmhaBwdTraits, fmhaBwdPhysicalSeqlens, type CheckedFmhaBwdTraits, type FmhaBwdTraits } from './fmhaBwdTraits.ts';
import {
  alignUp,
  describeFmhaBwdWorkspace,
  fmhaBwdDqAccIndex,
  fmhaBwdNeedsZeroDqAcc,
  fmhaBwdPersistentSplits,
  FmhaBwdWorkspaceError,
  makeFmhaBwdWorkspace,
  type FmhaBwdDqAccumulation,
  type FmhaBwdWorkspace,
} from './fmhaBwdWorkspace.ts';
import { bwdTraitsArb } from './testing/bwdArbitraries.ts';

/** The accumulation a non-direct instance must use for the traits' mode. */
const accFor = (t: CheckedFmhaBwdTraits): FmhaBwdDqAccumulation =>
  !t.deterministic ? 'atomic' : t.groupMode ? 'splitStore' : 'persistent';

const caseArb = fc.record({
  traits: bwdTraitsArb,
  kN0: fc.constantFrom(16, 64, 128),
  smCount: fc.integer({ min: 1, max: 200 }),
  direct: fc.boolean(),
});

function build(c: { traits: FmhaBwdTraits; kN0: number; smCount: number; direct: boolean }): FmhaBwdWorkspace {
  const t = checkFmhaBwdTraits(c.traits);
  return makeFmhaBwdWorkspace(t, { dqAccumulation: c.direct ? 'direct' : accFor(t), kN0: c.kN0 }, c.smCount);
}

describe('makeFmhaBwdWorkspace', () => {
  it('ordered (deterministic traits): the atomic layout of one split, then int32 counters [batch][nheadQ][⌈max sq / kM0⌉], zeroed with it', () => {
    const detArb = bwdTraitsArb.map((t) => ({ ...t, deterministic: true }));
    fc.assert(
      fc.property(detArb, fc.constantFrom(16, 64), fc.constantFrom(32, 64, 128), (traits, kN0, kM0) => {
        const t = checkFmhaBwdTraits(traits);
        const ws = makeFmhaBwdWorkspace(t, { dqAccumulation: 'ordered', kN0, kM0 }, 132);
        const atomic = makeFmhaBwdWorkspace(
          checkFmhaBwdTraits({ ...traits, deterministic: false }),
          { dqAccumulation: 'atomic', kN0 },
          132,
        );
        expect(ws.nsplits).toEqual([1]);
        expect(ws.dqAccElements).toBe(atomic.dqAccElements);
        expect(ws.dqAccOffsets).toEqual(atomic.dqAccOffsets);
        expect(ws.hostBytes).toBe(atomic.hostBytes);
        expect(ws.counterTiles).toBe(Math.ceil(Math.max(0, ...fmhaBwdPhysicalSeqlens(t).q) / kM0));
        expect(ws.counterOffset % 16).toBe(0);
        expect(ws.counterOffset).toBeGreaterThanOrEqual(ws.dqAccOffset + 4 * ws.dqAccElements);
        expect(ws.totalBytes - ws.counterOffset).toBeGreaterThanOrEqual(4 * t.batch * t.nheadQ * ws.counterTiles);
        expect(ws.totalBytes).toBe(ws.hostBytes + ws.deviceBytes);
        expect(ws.needsZeroDqAcc).toBe(ws.deviceBytes > 0);
        expect(describeFmhaBwdWorkspace(ws)).toContain(`int32 counters[${t.batch * t.nheadQ * ws.counterTiles}]`);
      }),
    );
  });

  it('regions are disjoint, in order and 16-byte aligned; host + device = total; dq_acc starts at hostBytes', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const ws = build(c);
        const regions = [
          [ws.nsplitsOffset, ws.nsplitsBytes],
          [ws.offsetsOffset, ws.offsetsBytes],
          [ws.dqAccOffset, ws.deviceBytes],
        ] as const;
        let end = 0;
        for (const [start, bytes] of regions) {
          expect(start % 16).toBe(0);
          expect(bytes % 16 === 0 || start === ws.dqAccOffset).toBe(true); // metadata regions padded
          expect(start).toBeGreaterThanOrEqual(end); // no overlap, in order
          end = start + bytes;
        }
        expect(ws.nsplitsBytes).toBeGreaterThanOrEqual(4 * ws.nsplits.length);
        expect(ws.offsetsBytes).toBeGreaterThanOrEqual(ws.offsetsBytes > 0 ? 8 * (ws.traits.batch + 1) : 0);
        expect(ws.dqAccOffset).toBe(ws.hostBytes);
        expect(ws.hostBytes).toBe(ws.nsplitsBytes + ws.offsetsBytes);
        expect(ws.totalBytes).toBe(ws.hostBytes + ws.deviceBytes);
        expect(ws.deviceBytes).toBe(4 * ws.dqAccElements);
        expect(ws.hostImage().length).toBe(ws.hostBytes);
      }),
    );
  });

  it('offsets are the prefix sums of nheadQ·nsplits_b·sq_b·hdimQ (sq_b physical) and every element of dq_acc has exactly one (b, h, split, row, dim)', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const ws = build(c);
        const t = ws.traits;
        const sq = fmhaBwdPhysicalSeqlens(t).q;
        expect(ws.dqAccOffsets.length).toBe(t.batch + 1);
        expect(ws.dqAccOffsets[0]).toBe(0);
        for (let b = 0; b < t.batch; b++)
          expect(ws.dqAccOffsets[b + 1]! - ws.dqAccOffsets[b]!).toBe(t.nheadQ * ws.splitsOfBatch(b) * sq[b]! * t.hdimQ);
        expect(ws.dqAccOffsets[t.batch]).toBe(ws.dqAccElements);
        // The first and last element of each non-empty batch region, through the index function.
        for (let b = 0; b < t.batch; b++) {
          const s = ws.splitsOfBatch(b);
          if (s === 0 || sq[b] === 0) continue;
          expect(fmhaBwdDqAccIndex(ws, b, 0, 0, 0)).toBe(ws.dqAccOffsets[b]);
          expect(fmhaBwdDqAccIndex(ws, b, t.nheadQ - 1, s - 1, sq[b]! - 1) + t.hdimQ).toBe(ws.dqAccOffsets[b + 1]);
        }
      }),
    );
  });

  it('per-batch nsplits: atomic 1; group deterministic ⌈sk_b/kN0⌉ from the instance’s kN0; batch deterministic one persistent count; direct 0 and nothing stored', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const ws = build(c);
        const t = ws.traits;
        const sk = fmhaBwdPhysicalSeqlens(t).k;
        const per = Array.from({ length: t.batch }, (_, b) => ws.splitsOfBatch(b));
        if (c.direct) {
          expect(per.every((n) => n === 0)).toBe(true);
          expect(ws.nsplits).toEqual([]);
          expect(ws.totalBytes).toBe(0);
        } else if (!t.deterministic) {
          expect(per.every((n) => n === 1)).toBe(true);
          expect(ws.nsplits).toEqual([1]);
        } else if (t.groupMode) {
          expect(per).toEqual(sk.map((k) => Math.ceil(k / c.kN0)));
          expect(ws.nsplits).toEqual(per);
        } else {
          const p = fmhaBwdPersistentSplits({ batch: t.batch, nheadQ: t.nheadQ, seqlenK: t.seqlenK, kN0: c.kN0, smCount: c.smCount });
          expect(per.every((n) => n === p.nsplits)).toBe(true);
          expect(ws.nsplits).toEqual([p.nsplits]);
        }
        // offsets are stored in group mode only
        expect(ws.offsetsBytes > 0).toBe(t.groupMode && !c.direct);
      }),
    );
  });

  it('zeroing exactly when NeedsZeroDqAcc requires it: atomics and persistent always, split stores only under a mask, never without dq_acc', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const ws = build(c);
        const t = ws.traits;
        const expected = c.direct || ws.deviceBytes === 0 ? false : !t.deterministic || !t.groupMode || t.mask.kind !== 'none';
        expect(ws.needsZeroDqAcc).toBe(expected);
      }),
    );
    expect(fmhaBwdNeedsZeroDqAcc('atomic', false)).toBe(true);
    expect(fmhaBwdNeedsZeroDqAcc('persistent', false)).toBe(true);
    expect(fmhaBwdNeedsZeroDqAcc('splitStore', false)).toBe(false);
    expect(fmhaBwdNeedsZeroDqAcc('splitStore', true)).toBe(true);
    expect(fmhaBwdNeedsZeroDqAcc('direct', true)).toBe(false);
  });

  it('the host image holds int32 nsplits then int64 offsets, little-endian, padding zero', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const ws = build(c);
        const img = ws.hostImage();
        const view = new DataView(img.buffer, img.byteOffset, img.byteLength);
        ws.nsplits.forEach((n, i) => expect(view.getInt32(4 * i, true)).toBe(n));
        for (let i = 4 * ws.nsplits.length; i < ws.nsplitsBytes; i++) expect(img[i]).toBe(0);
        if (ws.offsetsBytes > 0)
          ws.dqAccOffsets.forEach((o, i) => expect(view.getBigInt64(ws.offsetsOffset + 8 * i, true)).toBe(BigInt(o)));
        for (let i = ws.offsetsOffset + 8 * (ws.offsetsBytes > 0 ? ws.traits.batch + 1 : 0); i < ws.hostBytes; i++) expect(img[i]).toBe(0);
        img.fill(7); // a copy: the layout's own bytes are untouched
        expect(ws.hostImage().every((v, i) => v === 0 || i < ws.hostBytes)).toBe(true);
      }),
    );
  });

  describe("golden: the document's size table", () => {
    const base = { hdimQ: 64, hdimV: 64, nheadQ: 8, nheadK: 8, dtype: 'fp16' as const };
    it('QrQtrDor (direct) pipeline: 0 in any mode', () => {
      for (const deterministic of [false, true]) {
        const t = checkFmhaBwdTraits({
          ...base,
          batch: 2,
          seqlenQ: 100,
          seqlenK: 100,
          maxSeqlenQ: 100,
          maxSeqlenK: 100,
          groupMode: false,
          deterministic,
        });
        const ws = makeFmhaBwdWorkspace(t, { dqAccumulation: 'direct', kN0: 128 }, 132);
        expect([ws.hostBytes, ws.deviceBytes, ws.totalBytes]).toEqual([0, 0, 0]);
      }
    });
    it('non-deterministic batch mode: host_ws + batch·nhead·seqlen_q·hdim_q·4', () => {
      const t = checkFmhaBwdTraits({
        ...base,
        batch: 2,
        seqlenQ: 100,
        seqlenK: 77,
        maxSeqlenQ: 100,
        maxSeqlenK: 77,
        groupMode: false,
        deterministic: false,
      });
      const ws = makeFmhaBwdWorkspace(t, { dqAccumulation: 'atomic', kN0: 128 }, 132);
      expect(ws.nsplits).toEqual([1]);
      expect(ws.hostBytes).toBe(16);
      expect(ws.deviceBytes).toBe(2 * 8 * 100 * 64 * 4);
      expect(ws.totalBytes).toBe(409616);
    });
    it('non-deterministic group mode: host_ws + nhead·seqstart_q[batch]·hdim_q·4 (nsplits[1] and offsets[batch+1])', () => {
      const t = checkFmhaBwdTraits({
        ...base,
        nheadQ: 4,
        nheadK: 2,
        hdimQ: 128,
        hdimV: 128,
        batch: 3,
        seqlenQ: 17,
        seqlenK: 40,
        maxSeqlenQ: 12,
        maxSeqlenK: 30,
        groupMode: true,
        deterministic: false,
        seqstartQ: [0, 5, 5, 17],
        seqstartK: [0, 30, 30, 40],
      });
      const ws = makeFmhaBwdWorkspace(t, { dqAccumulation: 'atomic', kN0: 128 }, 132);
      expect(ws.nsplits).toEqual([1]);
      expect(ws.dqAccOffsets).toEqual([0, 4 * 5 * 128, 4 * 5 * 128, 4 * 17 * 128]);
      expect([ws.nsplitsBytes, ws.offsetsBytes, ws.hostBytes]).toEqual([16, 32, 48]);
      expect(ws.deviceBytes).toBe(4 * 17 * 128 * 4);
      expect(ws.totalBytes).toBe(48 + 34816);
    });
    it('deterministic group mode: nsplits[batch] = ⌈sk_b/kN0⌉ each, offsets[batch+1], compact dq_acc', () => {
      const t = checkFmhaBwdTraits({
        ...base,
        nheadQ: 4,
        nheadK: 4,
        hdimQ: 128,
        hdimV: 128,
        batch: 3,
        seqlenQ: 17,
        seqlenK: 429,
        maxSeqlenQ: 12,
        maxSeqlenK: 300,
        groupMode: true,
        deterministic: true,
        seqstartQ: [0, 5, 5, 17],
        seqstartK: [0, 300, 300, 429],
      });
      const ws = makeFmhaBwdWorkspace(t, { dqAccumulation: 'splitStore', kN0: 128 }, 132);
      expect(ws.nsplits).toEqual([3, 0, 2]);
      expect(ws.dqAccOffsets).toEqual([0, 7680, 7680, 19968]);
      expect([ws.nsplitsBytes, ws.offsetsBytes, ws.hostBytes, ws.deviceBytes, ws.totalBytes]).toEqual([16, 32, 48, 79872, 79920]);
      expect(ws.needsZeroDqAcc).toBe(false);
      const masked = makeFmhaBwdWorkspace(
        checkFmhaBwdTraits({ ...t, mask: causalTopLeft }),
        { dqAccumulation: 'splitStore', kN0: 128 },
        132,
      );
      expect(masked.needsZeroDqAcc).toBe(true);
      // The same traits with another instance's kN0: the split counts follow the instance.
      expect(makeFmhaBwdWorkspace(t, { dqAccumulation: 'splitStore', kN0: 64 }, 132).nsplits).toEqual([5, 0, 3]);
    });
    it('deterministic batch mode persistent: nsplits[1] for all batches, batch·nhead·nsplits·seqlen_q·hdim_q·4', () => {
      const t = checkFmhaBwdTraits({
        ...base,
        nheadQ: 16,
        nheadK: 16,
        hdimQ: 128,
        hdimV: 128,
        batch: 2,
        seqlenQ: 8192,
        seqlenK: 8192,
        maxSeqlenQ: 8192,
        maxSeqlenK: 8192,
        groupMode: false,
        deterministic: true,
        mask: noMask,
      });
      const ws = makeFmhaBwdWorkspace(t, { dqAccumulation: 'persistent', kN0: 128 }, 132);
      // jobs 64 per head, 2048 in all, 16 per worker on 132 SMs: 64 % 16 = 0 → 4 splits
      expect(ws.persistent).toEqual({ jobsPerHead: 64, totalJobs: 2048, workers: 132, jobsPerWorker: 16, nsplits: 4 });
      expect(ws.nsplits).toEqual([4]);
      expect(ws.hostBytes).toBe(16);
      expect(ws.deviceBytes).toBe(2 * 16 * 4 * 8192 * 128 * 4);
      expect(ws.needsZeroDqAcc).toBe(true);
    });
  });
});

describe('fmhaBwdPersistentSplits', () => {
  it('golden cases of the three branches and of no keys', () => {
    const s = (batch: number, nheadQ: number, seqlenK: number, kN0: number, smCount: number) =>
      fmhaBwdPersistentSplits({ batch, nheadQ, seqlenK, kN0, smCount }).nsplits;
    expect(s(1, 1, 1000, 128, 132)).toBe(8); // jpw 1 → one worker per key tile
    expect(s(3, 5, 640, 64, 132)).toBe(5); // jobs 10, jpw 2
    expect(s(4, 8, 256, 128, 16)).toBe(1); // jobs 2, jpw 4: whole heads per worker
    expect(s(7, 3, 896, 128, 10)).toBe(2); // jobs 7, jpw 15: misaligned
    expect(s(2, 2, 0, 128, 132)).toBe(1);
  });

  it('simulating the assignment, no head meets more than nsplits workers, and the count is reached when jobs % jpw = 0', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 3000 }),
        fc.constantFrom(32, 64, 128),
        fc.integer({ min: 1, max: 140 }),
        (batch, nheadQ, seqlenK, kN0, smCount) => {
          const p = fmhaBwdPersistentSplits({ batch, nheadQ, seqlenK, kN0, smCount });
          expect(p.jobsPerHead).toBe(Math.ceil(seqlenK / kN0));
          if (p.totalJobs === 0) return void expect(p.nsplits).toBe(1);
          expect(Math.ceil(p.totalJobs / p.jobsPerWorker)).toBeLessThanOrEqual(smCount);
          let most = 0;
          for (let head = 0; head < batch * nheadQ; head++) {
            const first = Math.floor((head * p.jobsPerHead) / p.jobsPerWorker);
            const last = Math.floor(((head + 1) * p.jobsPerHead - 1) / p.jobsPerWorker);
            most = Math.max(most, last - first + 1);
          }
          expect(most).toBeLessThanOrEqual(p.nsplits);
          if (p.jobsPerHead % p.jobsPerWorker === 0) expect(most).toBe(p.nsplits);
        },
      ),
    );
  });
});

describe('workspace errors and description', () => {
  const t = checkFmhaBwdTraits({
    hdimQ: 64,
    hdimV: 64,
    nheadQ: 2,
    nheadK: 1,
    dtype: 'bf16',
    batch: 2,
    seqlenQ: 9,
    seqlenK: 300,
    maxSeqlenQ: 7,
    maxSeqlenK: 299,
    groupMode: true,
    deterministic: true,
    seqstartQ: [0, 7, 9],
    seqstartK: [0, 299, 300],
  });

  it('rejects an accumulation that does not fit the mode, a bad kN0 or SM count, with typed errors', () => {
    expect(() => makeFmhaBwdWorkspace(t, { dqAccumulation: 'atomic', kN0: 128 }, 132)).toThrow(FmhaBwdWorkspaceError);
    expect(() => makeFmhaBwdWorkspace(t, { dqAccumulation: 'persistent', kN0: 128 }, 132)).toThrow(
      /dqAccumulation: must be direct or splitStore or ordered for deterministic group mode/,
    );
    expect(() => makeFmhaBwdWorkspace(t, { dqAccumulation: 'ordered', kN0: 64 }, 132)).toThrow(
      /kM0: must be a positive integer for ordered/,
    );
    expect(() => makeFmhaBwdWorkspace(t, { dqAccumulation: 'splitStore', kN0: 0 }, 132)).toThrow(/kN0: must be a positive integer/);
    expect(() => makeFmhaBwdWorkspace(t, { dqAccumulation: 'splitStore', kN0: 64 }, 0)).toThrow(/smCount/);
    expect(() => makeFmhaBwdWorkspace(t, { dqAccumulation: 'nope' as never, kN0: 64 }, 1)).toThrow(/dqAccumulation: must be one of/);
    const ws = makeFmhaBwdWorkspace(t, { dqAccumulation: 'splitStore', kN0: 64 }, 132);
    expect(() => ws.splitsOfBatch(2)).toThrow(/b: must be a batch index in \[0, 2\)/);
    expect(() => fmhaBwdDqAccIndex(ws, 0, 2, 0, 0)).toThrow(/h: must be in \[0, 2\)/);
    expect(alignUp(0)).toBe(0);
    expect(alignUp(17)).toBe(32);
  });

  it('describes the byte map: every region with its range, the per-batch shapes', () => {
    const ws = makeFmhaBwdWorkspace(t, { dqAccumulation: 'splitStore', kN0: 64 }, 132);
    const text = describeFmhaBwdWorkspace(ws);
    expect(text).toContain(`${ws.totalBytes} bytes (host 48 + device ${ws.deviceBytes})`);
    expect(text).toContain('[0, 16)  int32 nsplits[2] = [5, 1], 8 padding bytes');
    expect(text).toContain('[16, 48)  int64 dq_acc_offsets[3] = [0, 4480, 4736], 8 padding bytes');
    expect(text).toContain(`[48, ${ws.totalBytes})  fp32 dq_acc[4736]`);
    expect(text).toContain('batch 1: [17968, 18992) [2 heads][1 splits][2 rows][64]');
    expect(text).toContain('zero dq_acc: no');
    expect(describeFmhaBwdWorkspace(makeFmhaBwdWorkspace(t, { dqAccumulation: 'direct', kN0: 64 }, 132))).toContain('no workspace');
  });
});
