// fast-check arbitraries of backward traits and instance catalogs, shared by the bwd specs (and
// by other packages' tests through the package barrel's `testing` re-export if wanted).
import fc from 'fast-check';
import { causalBottomRight, causalTopLeft, noMask, type AttentionMaskSpec } from '../../mask/attentionMaskSpec.ts';
import type { FmhaBwdRecordTriple } from '../fmhaBwdRecord.ts';
import type { FmhaBwdTraits } from '../fmhaBwdTraits.ts';
import type { FmhaBwdDqAccumulation } from '../fmhaBwdWorkspace.ts';

/** Masks of every kind. */
export const bwdMaskArb: fc.Arbitrary<AttentionMaskSpec> = fc.oneof(
  fc.constantFrom(noMask, noMask, causalTopLeft, causalBottomRight),
  fc.record({
    kind: fc.constant('window' as const),
    alignment: fc.constantFrom('topLeft' as const, 'bottomRight' as const),
    left: fc.integer({ min: -1, max: 64 }),
    right: fc.integer({ min: -1, max: 64 }),
  }),
  fc.record({ kind: fc.constant('generic' as const), y: fc.integer({ min: -4, max: 40 }), x: fc.integer({ min: -4, max: 40 }) }),
);

const cumulative = (lens: readonly number[]): number[] => lens.reduce<number[]>((acc, l) => [...acc, acc[acc.length - 1]! + l], [0]);

/** Valid traits: batch or group mode (ragged, empty sequences and padding included), GQA, every mask. */
export const bwdTraitsArb: fc.Arbitrary<FmhaBwdTraits> = fc
  .record({
    batch: fc.integer({ min: 1, max: 6 }),
    nheadK: fc.integer({ min: 1, max: 4 }),
    ratio: fc.constantFrom(1, 2, 4),
    hdimQ: fc.constantFrom(32, 64, 128, 256),
    hdimV: fc.constantFrom(32, 64, 128, 256),
    dtype: fc.constantFrom('fp16' as const, 'bf16' as const),
    groupMode: fc.boolean(),
    deterministic: fc.boolean(),
    lens: fc.array(fc.tuple(fc.integer({ min: 0, max: 700 }), fc.integer({ min: 0, max: 700 }), fc.nat(3), fc.nat(3)), {
      minLength: 6,
      maxLength: 6,
    }),
    mask: bwdMaskArb,
  })
  .map(({ batch, nheadK, ratio, lens, ...rest }) => {
    const used = lens.slice(0, batch);
    const common = { ...rest, batch, nheadQ: nheadK * ratio, nheadK };
    if (!rest.groupMode) {
      const [sq, sk] = [used[0]![0], used[0]![1]];
      return { ...common, seqlenQ: sq, seqlenK: sk, maxSeqlenQ: sq, maxSeqlenK: sk };
    }
    // Physical slots = logical length + padding.
    const seqstartQ = cumulative(used.map(([q, , pq]) => q + pq));
    const seqstartK = cumulative(used.map(([, k, , pk]) => k + pk));
    return {
      ...common,
      seqlenQ: seqstartQ[batch]!,
      seqlenK: seqstartK[batch]!,
      maxSeqlenQ: Math.max(...used.map(([q]) => q)),
      maxSeqlenK: Math.max(...used.map(([, k]) => k)),
      seqstartQ,
      seqstartK,
    };
  });

/** A well-formed triple with the given facts (names spell them). */
export function bwdTriple(f: {
  dtype: 'fp16' | 'bf16';
  hdimQ: number;
  hdimV: number;
  groupMode: boolean;
  dqAccumulation: FmhaBwdDqAccumulation;
  kN0: number;
  masks?: readonly AttentionMaskSpec['kind'][];
  maxSeqlenQ?: number;
}): FmhaBwdRecordTriple {
  const mode = f.groupMode ? 'group' : 'batch';
  const masks = f.masks ?? ['none', 'window', 'generic'];
  const det = f.dqAccumulation === 'splitStore' || f.dqAccumulation === 'persistent';
  return {
    dotDoO: { name: `dot_do_o_${f.dtype}_d${f.hdimV}_${mode}`, dtype: f.dtype, hdimV: f.hdimV, groupMode: f.groupMode, hasDropout: false },
    dqDkDv: {
      name: `dq_dk_dv_${f.dtype}_d${f.hdimQ}x${f.hdimV}_${mode}_${f.dqAccumulation}_n${f.kN0}_${masks.join('-')}`,
      dtype: f.dtype,
      hdimQ: f.hdimQ,
      hdimV: f.hdimV,
      groupMode: f.groupMode,
      masks,
      biases: ['none'],
      hasDbias: false,
      hasDropout: false,
      storeRandval: false,
      dqAccumulation: f.dqAccumulation,
      kN0: f.kN0,
      maxSeqlenQ: f.maxSeqlenQ ?? 0,
    },
    convertDq:
      f.dqAccumulation === 'direct'
        ? null
        : {
            name: `convert_dq_${f.dtype}_d${f.hdimQ}_${mode}_${det ? 'det' : 'atomic'}`,
            dtype: f.dtype,
            hdimQ: f.hdimQ,
            groupMode: f.groupMode,
            deterministic: det,
          },
  };
}

/** A catalog covering fp16/bf16 × d 64/128/256 (d_v = d_q) × both modes × both determinisms, kN0 128 (d ≤ 128) or 64. */
export function bwdCatalog(): FmhaBwdRecordTriple[] {
  const out: FmhaBwdRecordTriple[] = [];
  for (const dtype of ['fp16', 'bf16'] as const)
    for (const d of [64, 128, 256])
      for (const groupMode of [false, true])
        for (const acc of ['atomic', groupMode ? 'splitStore' : 'persistent'] as const)
          out.push(bwdTriple({ dtype, hdimQ: d, hdimV: d, groupMode, dqAccumulation: acc, kN0: d <= 128 ? 128 : 64 }));
  return out;
}
