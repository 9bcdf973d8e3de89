// What the pure launcher knows of the compiled backward instances: names and the facts that
// selection and the workspace depend on. The kernels package builds these records from its
// catalog; nothing here knows how a kernel is emitted or launched.
import { ArgumentError } from '@tilekit/numeric';
import type { AttentionMaskSpec } from '../mask/attentionMaskSpec.ts';
import {
  FMHA_BWD_BIAS_KINDS,
  FMHA_BWD_DTYPES,
  type CheckedFmhaBwdTraits,
  type FmhaBwdBiasKind,
  type FmhaBwdDType,
} from './fmhaBwdTraits.ts';
import { FMHA_BWD_DQ_ACCUMULATIONS, type FmhaBwdDqAccumulation } from './fmhaBwdWorkspace.ts';

/** A catalog record broke a rule (a programming error of the catalog, not of the caller's traits). */
export class FmhaBwdCatalogError extends ArgumentError {}

/** Mask kinds an instance may apply (`AttentionMaskSpec['kind']`). */
export type FmhaBwdMaskKind = AttentionMaskSpec['kind'];
const MASK_KINDS: readonly FmhaBwdMaskKind[] = ['none', 'window', 'generic'];

/** dot_do_o: D = p_undrop · rowsum(dO ∘ O) per (batch, query head, row). */
export interface FmhaBwdDotDoORecord {
  readonly name: string;
  readonly dtype: FmhaBwdDType;
  readonly hdimV: number;
  readonly groupMode: boolean;
  /** Scales D by 1 − p_drop. */
  readonly hasDropout: boolean;
}

/** dq_dk_dv: one block per key tile, dK/dV in registers, dQ through the workspace (or directly). */
export interface FmhaBwdDqDkDvRecord {
  readonly name: string;
  readonly dtype: FmhaBwdDType;
  readonly hdimQ: number;
  readonly hdimV: number;
  readonly groupMode: boolean;
  /** The mask kinds it applies at runtime (`none` = unmasked problems). */
  readonly masks: readonly FmhaBwdMaskKind[];
  readonly biases: readonly FmhaBwdBiasKind[];
  readonly hasDbias: boolean;
  readonly hasDropout: boolean;
  readonly storeRandval: boolean;
  /** How dQ is produced (decides determinism and the workspace). */
  readonly dqAccumulation: FmhaBwdDqAccumulation;
  /** Keys per block tile (CK's kN0): the workspace's split size. */
  readonly kN0: number;
  /** Query rows per block tile: required with `ordered` (the workspace counts adds per query tile). */
  readonly kM0?: number;
  /** The longest maxSeqlenQ it handles (`direct` pipelines keep all of Q on chip); 0 = no limit. */
  readonly maxSeqlenQ: number;
}

/** convert_dq: sums the nsplits (read from the workspace) fp32 partials in order and casts to dQ. */
export interface FmhaBwdConvertDqRecord {
  readonly name: string;
  readonly dtype: FmhaBwdDType;
  readonly hdimQ: number;
  readonly groupMode: boolean;
  readonly deterministic: boolean;
}

/** CK's (dot_do_o, dq_dk_dv, convert_dq) triple; `convertDq` is null exactly when dq_dk_dv writes dQ directly. */
export interface FmhaBwdRecordTriple {
  readonly dotDoO: FmhaBwdDotDoORecord;
  readonly dqDkDv: FmhaBwdDqDkDvRecord;
  readonly convertDq: FmhaBwdConvertDqRecord | null;
}

/** The instances a launcher chooses from, in priority order (the first match wins). */
export type FmhaBwdRecordCatalog = readonly FmhaBwdRecordTriple[];

/** One unmet predicate: the trait that decided it and why. */
export interface FmhaBwdMismatch {
  readonly trait: keyof CheckedFmhaBwdTraits;
  readonly reason: string;
}

function bad(where: string, rule: string, found: unknown): never {
  throw new FmhaBwdCatalogError(where, rule, found);
}

function named(where: string, r: { readonly name: string } | null | undefined): void {
  if (typeof r !== 'object' || r === null) bad(where, 'must be an instance record', r);
  if (typeof r.name !== 'string' || r.name.length === 0) bad(`${where}.name`, 'must be a non-empty string', r.name);
}

function dtypeOf(where: string, v: unknown): void {
  if (!(FMHA_BWD_DTYPES as readonly unknown[]).includes(v)) bad(where, `must be one of ${FMHA_BWD_DTYPES.join(', ')}`, v);
}

function positive(where: string, v: unknown): void {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) bad(where, 'must be a positive integer', v);
}

function bool(where: string, v: unknown): void {
  if (typeof v !== 'boolean') bad(where, 'must be a boolean', v);
}

/**
 * Checks one catalog triple: names non-empty; dtypes fp16 | bf16 and equal across the three;
 * head dims positive and consistent (dot_do_o hdimV = dq_dk_dv hdimV, convert_dq hdimQ =
 * dq_dk_dv hdimQ); the same groupMode; masks and biases non-empty lists of known kinds; kN0
 * positive, maxSeqlenQ ≥ 0; convertDq null iff dqAccumulation is `direct`, and its
 * `deterministic` = (dqAccumulation is splitStore or persistent).
 * @throws FmhaBwdCatalogError naming `catalog[i].<stage>.<field>`.
 */
export function checkFmhaBwdRecordTriple(triple: FmhaBwdRecordTriple, where = 'triple'): void {
  if (typeof triple !== 'object' || triple === null) bad(where, 'must be { dotDoO, dqDkDv, convertDq }', triple);
  const { dotDoO, dqDkDv, convertDq } = triple;
  named(`${where}.dotDoO`, dotDoO);
  named(`${where}.dqDkDv`, dqDkDv);
  dtypeOf(`${where}.dqDkDv.dtype`, dqDkDv.dtype);
  if (dotDoO.dtype !== dqDkDv.dtype) bad(`${where}.dotDoO.dtype`, `must equal dqDkDv.dtype = ${dqDkDv.dtype}`, dotDoO.dtype);
  for (const k of ['hdimQ', 'hdimV', 'kN0'] as const) positive(`${where}.dqDkDv.${k}`, dqDkDv[k]);
  if (dotDoO.hdimV !== dqDkDv.hdimV) bad(`${where}.dotDoO.hdimV`, `must equal dqDkDv.hdimV = ${dqDkDv.hdimV}`, dotDoO.hdimV);
  if (typeof dqDkDv.maxSeqlenQ !== 'number' || !Number.isSafeInteger(dqDkDv.maxSeqlenQ) || dqDkDv.maxSeqlenQ < 0)
    bad(`${where}.dqDkDv.maxSeqlenQ`, 'must be an integer ≥ 0 (0 = no limit)', dqDkDv.maxSeqlenQ);
  for (const k of ['groupMode', 'hasDbias', 'hasDropout', 'storeRandval'] as const) bool(`${where}.dqDkDv.${k}`, dqDkDv[k]);
  for (const k of ['groupMode', 'hasDropout'] as const) bool(`${where}.dotDoO.${k}`, dotDoO[k]);
  if (dotDoO.groupMode !== dqDkDv.groupMode)
    bad(`${where}.dotDoO.groupMode`, `must equal dqDkDv.groupMode = ${dqDkDv.groupMode}`, dotDoO.groupMode);
  if (dotDoO.hasDropout !== dqDkDv.hasDropout)
    bad(`${where}.dotDoO.hasDropout`, `must equal dqDkDv.hasDropout = ${dqDkDv.hasDropout}`, dotDoO.hasDropout);
  if (!Array.isArray(dqDkDv.masks) || dqDkDv.masks.length === 0 || !dqDkDv.masks.every((m) => MASK_KINDS.includes(m)))
    bad(`${where}.dqDkDv.masks`, `must be a non-empty list of ${MASK_KINDS.join(', ')}`, dqDkDv.masks);
  if (
    !Array.isArray(dqDkDv.biases) ||
    dqDkDv.biases.length === 0 ||
    !dqDkDv.biases.every((b) => (FMHA_BWD_BIAS_KINDS as readonly string[]).includes(b))
  )
    bad(`${where}.dqDkDv.biases`, `must be a non-empty list of ${FMHA_BWD_BIAS_KINDS.join(', ')}`, dqDkDv.biases);
  if (!(FMHA_BWD_DQ_ACCUMULATIONS as readonly unknown[]).includes(dqDkDv.dqAccumulation))
    bad(`${where}.dqDkDv.dqAccumulation`, `must be one of ${FMHA_BWD_DQ_ACCUMULATIONS.join(', ')}`, dqDkDv.dqAccumulation);
  if (dqDkDv.dqAccumulation === 'ordered') positive(`${where}.dqDkDv.kM0`, dqDkDv.kM0);
  const direct = dqDkDv.dqAccumulation === 'direct';
  if (direct) {
    if (convertDq !== null) bad(`${where}.convertDq`, 'must be null: the dq_dk_dv instance writes dQ directly', convertDq?.name);
    return;
  }
  named(`${where}.convertDq`, convertDq);
  const c = convertDq!;
  if (c.dtype !== dqDkDv.dtype) bad(`${where}.convertDq.dtype`, `must equal dqDkDv.dtype = ${dqDkDv.dtype}`, c.dtype);
  if (c.hdimQ !== dqDkDv.hdimQ) bad(`${where}.convertDq.hdimQ`, `must equal dqDkDv.hdimQ = ${dqDkDv.hdimQ}`, c.hdimQ);
  if (c.groupMode !== dqDkDv.groupMode)
    bad(`${where}.convertDq.groupMode`, `must equal dqDkDv.groupMode = ${dqDkDv.groupMode}`, c.groupMode);
  const det = dqDkDv.dqAccumulation === 'splitStore' || dqDkDv.dqAccumulation === 'persistent';
  if (c.deterministic !== det)
    bad(`${where}.convertDq.deterministic`, `must be ${det} for dqAccumulation ${dqDkDv.dqAccumulation}`, c.deterministic);
}

/** The accumulations a dq_dk_dv instance may use for the traits' (deterministic, groupMode). */
export function fmhaBwdAcceptedAccumulations(
  t: Pick<CheckedFmhaBwdTraits, 'deterministic' | 'groupMode'>,
): readonly FmhaBwdDqAccumulation[] {
  if (!t.deterministic) return ['atomic', 'direct'];
  return t.groupMode ? ['splitStore', 'ordered', 'direct'] : ['persistent', 'ordered', 'direct'];
}

/**
 * The selection predicates, explicit, one per trait: every one that `triple` fails on `traits`
 * (empty = it matches). dtype, hdimQ, hdimV and groupMode must be equal; the mask kind and bias
 * kind must be in the instance's lists; hasDbias, hasDropout and storeRandval must be equal;
 * deterministic must fit the dq accumulation (`fmhaBwdAcceptedAccumulations`); a `direct`
 * pipeline with a maxSeqlenQ limit must not be exceeded.
 */
export function fmhaBwdTripleMismatches(triple: FmhaBwdRecordTriple, t: CheckedFmhaBwdTraits): FmhaBwdMismatch[] {
  const i = triple.dqDkDv;
  const out: FmhaBwdMismatch[] = [];
  const equal = <K extends 'dtype' | 'hdimQ' | 'hdimV' | 'groupMode' | 'hasDbias' | 'hasDropout' | 'storeRandval'>(
    trait: K,
    has: CheckedFmhaBwdTraits[K],
  ): void => {
    if (t[trait] !== has) out.push({ trait, reason: `${trait} ${String(t[trait])} ≠ ${String(has)}` });
  };
  equal('dtype', i.dtype);
  equal('hdimQ', i.hdimQ);
  equal('hdimV', i.hdimV);
  equal('groupMode', i.groupMode);
  if (!i.masks.includes(t.mask.kind)) out.push({ trait: 'mask', reason: `mask ${t.mask.kind} ∉ {${i.masks.join(', ')}}` });
  if (!i.biases.includes(t.bias)) out.push({ trait: 'bias', reason: `bias ${t.bias} ∉ {${i.biases.join(', ')}}` });
  equal('hasDbias', i.hasDbias);
  equal('hasDropout', i.hasDropout);
  equal('storeRandval', i.storeRandval);
  if (!fmhaBwdAcceptedAccumulations(t).includes(i.dqAccumulation))
    out.push({
      trait: 'deterministic',
      reason:
        `deterministic ${t.deterministic} in ${t.groupMode ? 'group' : 'batch'} mode needs ` +
        `${fmhaBwdAcceptedAccumulations(t).join(' or ')}, not ${i.dqAccumulation}`,
    });
  if (i.maxSeqlenQ > 0 && t.maxSeqlenQ > i.maxSeqlenQ)
    out.push({ trait: 'maxSeqlenQ', reason: `maxSeqlenQ ${t.maxSeqlenQ} > ${i.maxSeqlenQ}` });
  return out;
}
