// CI (no GPU): the sm_80 launcher's predicates and argument checks, and what it packs — pointers,
// element strides (batch strides 0 in group mode), head ratio, scale · log2 e, window sizes, grid.
import fc from 'fast-check';
import { causalBottomRight, noMask, slidingWindowMask } from '@tilekit/fmha';
import { fmhaFwdTestProblem, fmhaFwdTestRange } from '@tilekit/fmha/testing';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { FMHA_FWD_SM80_CATALOG } from './fmhaFwdSm80Catalog.ts';
import { fmhaFwdSm80Unsupported, prepareFmhaFwdSm80Launch, type FmhaFwdSm80Buffers } from './fmhaFwdSm80Launcher.ts';

const find = (dtype: string, d: number, mask: string) =>
  FMHA_FWD_SM80_CATALOG.find((i) => i.policy.dtype === dtype && i.policy.headDim === d && i.policy.mask === mask)!;
const d128 = find('fp16', 128, 'none');
const d128Window = find('fp16', 128, 'window');

/** Buffers big enough for anything here, at 256-byte aligned fake addresses. */
const problem = fmhaFwdTestProblem;

const buffers = (extra: Partial<FmhaFwdSm80Buffers> = {}): FmhaFwdSm80Buffers => {
  const big = fmhaFwdTestRange;
  return { q: big(0), k: big(1), v: big(2), o: big(3), lse: big(4), seqstartQ: big(5), seqstartK: big(6), ...extra };
};

function argumentOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ArgumentError);
    return (e as ArgumentError).argument;
  }
  throw new Error('no error thrown');
}

describe('prepareFmhaFwdSm80Launch', () => {
  it('batch mode: grid (query tiles, heads, batch), pointers and element strides as given, head ratio, scale · log2 e', () => {
    const p = problem({ inputLayout: 'bshd' });
    const { launch, args } = prepareFmhaFwdSm80Launch(d128, p, buffers());
    expect(launch).toEqual({ grid: [3, 8, 2], block: [256, 1, 1], sharedBytes: d128.sharedBytes });
    const a = d128.signature.unpack(args.bytes);
    expect([a.q, a.k, a.v, a.o, a.lse]).toEqual([0x1000_0000n, 0x2000_0000n, 0x3000_0000n, 0x4000_0000n, 0x5000_0000n]);
    expect([a.q_stride_row, a.q_stride_head, a.q_stride_batch]).toEqual([8 * 128, 128n, BigInt(300 * 8 * 128)]);
    expect([a.k_stride_row, a.k_stride_head, a.k_stride_batch]).toEqual([2 * 128, 128n, BigInt(1000 * 2 * 128)]);
    expect([a.o_stride_row, a.o_stride_head, a.o_stride_batch]).toEqual([128, 300n * 128n, 8n * 300n * 128n]);
    expect([a.nhead_ratio, a.seqlen_q, a.seqlen_k, a.mask_left, a.mask_right, a.mask_top_left]).toEqual([4, 300, 1000, -1, -1, 1]);
    expect(a.scale_log2).toBeCloseTo(p.scale * Math.LOG2E, 6);
    expect(a.seqstart_q).toBe(0n);
  });

  it('group mode: one "batch" of all rows (batch strides 0), seqstarts passed, grid over the longest sequence', () => {
    const p = problem({ mask: causalBottomRight, seqstartQ: [0, 17, 17, 276], seqstartK: [0, 5, 305, 305], batch: 3 });
    const { launch, args } = prepareFmhaFwdSm80Launch(d128Window, p, buffers());
    expect(launch.grid).toEqual([3, 8, 3]);
    const a = d128Window.signature.unpack(args.bytes);
    expect([a.q_stride_batch, a.k_stride_batch, a.v_stride_batch, a.o_stride_batch, a.lse_stride_batch]).toEqual([0n, 0n, 0n, 0n, 0n]);
    expect([a.seqstart_q, a.seqstart_k, a.seqlen_k_ptr]).toEqual([0x6000_0000n, 0x7000_0000n, 0n]);
    expect([a.mask_left, a.mask_right, a.mask_top_left]).toEqual([-1, 0, 0]);
    const { seqstartQ: _s, ...noStarts } = buffers();
    expect(argumentOf(() => prepareFmhaFwdSm80Launch(d128Window, p, noStarts))).toBe('seqstartQ');
  });

  it('rejects what the kernel cannot run, every reason listed, and bad buffers by name', () => {
    const p = problem();
    expect(fmhaFwdSm80Unsupported(d128, p)).toEqual([]);
    expect(fmhaFwdSm80Unsupported(d128, problem({ dtype: 'bf16', hdimQ: 64, mask: slidingWindowMask(4, 4), splitKv: 2 }))).toEqual([
      'dtype bf16: this kernel computes fp16',
      'head dims 64/64: this kernel has 128/128',
      'a masked problem: this kernel has no mask',
      '2 key splits: the sm_80 kernel does not split',
    ]);
    expect(fmhaFwdSm80Unsupported(d128Window, problem({ mask: noMask }))).toEqual(['no mask: this kernel applies a window mask']);
    // Padded rows of 132 elements: 264 bytes, not whole 16-byte vectors.
    const odd = {
      ...p,
      qStrides: { batch: 300 * 8 * 132, head: 300 * 132, row: 132 },
      vStrides: { ...p.vStrides, head: p.vStrides.head + 4 },
    };
    expect(fmhaFwdSm80Unsupported(d128, odd)).toEqual([
      'q row stride 132 is not a multiple of 8 elements (16-byte cp.async rows; no scalar fallback)',
      `v head stride ${p.vStrides.head + 4} is not a multiple of 8 elements (16-byte cp.async rows; no scalar fallback)`,
    ]);
    expect(argumentOf(() => prepareFmhaFwdSm80Launch(d128, odd, buffers()))).toBe('problem');
    expect(argumentOf(() => prepareFmhaFwdSm80Launch(d128, p, buffers({ q: { ptr: 0x1000_0008n, bytes: 2 ** 28 } })))).toBe('q');
    expect(argumentOf(() => prepareFmhaFwdSm80Launch(d128, p, buffers({ k: { ptr: 0x2000_0000n, bytes: 100 } })))).toBe('k');
    const { lse: _lse, ...noLse } = buffers();
    expect(argumentOf(() => prepareFmhaFwdSm80Launch(d128, p, noLse))).toBe('lse');
    expect(argumentOf(() => prepareFmhaFwdSm80Launch(d128, p, buffers({ o: { ptr: 0x4000_0001n, bytes: 2 ** 28 } })))).toBe('o');
    // Every problem at once, in one error: the predicates, then each broken buffer.
    const all = (() => {
      try {
        prepareFmhaFwdSm80Launch(d128, odd, {
          ...noLse,
          q: { ptr: 0x1000_0008n, bytes: 2 ** 28 },
          k: { ptr: 0x2000_0000n, bytes: 100 },
          o: { ptr: 0x4000_0001n, bytes: 2 ** 28 },
        });
      } catch (e) {
        return e as ArgumentError;
      }
      return undefined;
    })();
    expect(all?.problems.map((x) => x.argument)).toEqual(['problem', 'q', 'k', 'o', 'lse']);
    expect(all?.message).toMatch(/^5 problems: problem: .*; q: address must be aligned to 16 bytes \(cp\.async\)/);
  });

  it('a strided problem runs exactly when every Q/K/V stride is a multiple of 8 elements and every O stride is even', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 128, max: 200 }),
        fc.integer({ min: 128, max: 200 }),
        fc.integer({ min: 128, max: 200 }),
        (qRow, kRow, oRow) => {
          const p = problem({
            batch: 1,
            nheadQ: 1,
            nheadK: 1,
            seqlenQ: 5,
            seqlenK: 7,
            qStrides: { batch: 5 * qRow, head: 5 * qRow, row: qRow },
            kStrides: { batch: 7 * kRow, head: 7 * kRow, row: kRow },
            oStrides: { batch: 5 * oRow, head: 5 * oRow, row: oRow },
          });
          const ok = qRow % 8 === 0 && kRow % 8 === 0 && oRow % 2 === 0;
          return (fmhaFwdSm80Unsupported(d128, p).length === 0) === ok;
        },
      ),
    );
  });
});
