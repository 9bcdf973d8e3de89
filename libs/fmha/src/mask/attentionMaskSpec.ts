import { ArgumentError } from '@tilekit/numeric';

/** Where a sliding window is anchored: the diagonal through (0, 0) or through (sq − 1, sk − 1). */
export const MASK_ALIGNMENTS = ['topLeft', 'bottomRight'] as const;
export type MaskAlignment = (typeof MASK_ALIGNMENTS)[number];

/**
 * What an attention mask keeps, independent of the sequence lengths (CK-tile's `mask_info`):
 * - `none`: every key of the sequence;
 * - `window`: FlashAttention's (left, right) window around the diagonal anchored at `alignment`;
 *   query i keeps keys j with i' − left ≤ j' ≤ i' + right where (i', j') are measured from the
 *   anchor; a negative size is unbounded on that side. Causal = (left −1, right 0).
 * - `generic`: CK's raw coordinates (y, x): keep j with i − y < j < i + x (also j < seqlenK).
 */
export type AttentionMaskSpec =
  | { readonly kind: 'none' }
  | { readonly kind: 'window'; readonly alignment: MaskAlignment; readonly left: number; readonly right: number }
  | { readonly kind: 'generic'; readonly y: number; readonly x: number };

/** An argument describing a mask (a spec or a `-mask=` string) broke a rule. */
export class AttentionMaskError extends ArgumentError {}

/** No masking. */
export const noMask: AttentionMaskSpec = Object.freeze({ kind: 'none' });

/** Causal from the top-left corner: query i sees keys j ≤ i (CK `-mask=t` / `1`). */
export const causalTopLeft: AttentionMaskSpec = Object.freeze({ kind: 'window', alignment: 'topLeft', left: -1, right: 0 });

/** Causal from the bottom-right corner: query i sees keys j ≤ i + sk − sq (CK `-mask=b` / `2`, FlashAttention's causal). */
export const causalBottomRight: AttentionMaskSpec = Object.freeze({ kind: 'window', alignment: 'bottomRight', left: -1, right: 0 });

/**
 * A (left, right) sliding window anchored at `alignment` (negative = unbounded on that side), checked:
 * sizes must be safe integers.
 * @throws AttentionMaskError naming `left`/`right`/`alignment`.
 */
export function slidingWindowMask(left: number, right: number, alignment: MaskAlignment = 'topLeft'): AttentionMaskSpec {
  return checkAttentionMaskSpec({ kind: 'window', alignment, left, right });
}

const MAX_SIZE = 2 ** 31 - 1;

function checkSize(where: string, v: unknown, min: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > MAX_SIZE) {
    throw new AttentionMaskError(where, `must be an integer in [${min}, 2^31 − 1]${min < 0 ? ' (negative = unbounded)' : ''}`, v);
  }
  return v;
}

/**
 * Validates a spec (any negative window size is unbounded and normalized to −1; window sizes and
 * generic coordinates are int32) and returns it frozen.
 * @throws AttentionMaskError naming `mask.<field>`.
 */
export function checkAttentionMaskSpec(spec: AttentionMaskSpec, where = 'mask'): AttentionMaskSpec {
  if (typeof spec !== 'object' || spec === null) throw new AttentionMaskError(where, 'must be a mask spec object', spec);
  switch (spec.kind) {
    case 'none':
      return noMask;
    case 'window': {
      if (!(MASK_ALIGNMENTS as readonly string[]).includes(spec.alignment)) {
        throw new AttentionMaskError(`${where}.alignment`, `must be one of ${MASK_ALIGNMENTS.join(', ')}`, spec.alignment);
      }
      const left = checkSize(`${where}.left`, spec.left, -MAX_SIZE);
      const right = checkSize(`${where}.right`, spec.right, -MAX_SIZE);
      return Object.freeze({ kind: 'window', alignment: spec.alignment, left: Math.max(left, -1), right: Math.max(right, -1) });
    }
    case 'generic':
      return Object.freeze({
        kind: 'generic',
        y: checkSize(`${where}.y`, spec.y, -MAX_SIZE),
        x: checkSize(`${where}.x`, spec.x, -MAX_SIZE),
      });
    default:
      throw new AttentionMaskError(`${where}.kind`, 'must be one of none, window, generic', (spec as { kind?: unknown }).kind);
  }
}

/** Is the spec the causal mask (window −1, 0) in either alignment? */
export function isCausalMask(spec: AttentionMaskSpec): boolean {
  return spec.kind === 'window' && spec.left < 0 && spec.right === 0;
}

const INTEGER = /^-?\d+$/;

function parseInteger(text: string, where: string, whole: string): number {
  if (!INTEGER.test(text)) throw new AttentionMaskError(where, `must be an integer in "${whole}"`, text);
  return checkSize(where, Number(text), -MAX_SIZE);
}

function parsePair(value: string, whole: string): [number, number] {
  const parts = value.split(',');
  if (parts.length !== 2) throw new AttentionMaskError('mask', 'a window needs two sizes "l,r" after the colon', whole);
  return [parseInteger(parts[0]!, 'mask.left', whole), parseInteger(parts[1]!, 'mask.right', whole)];
}

/**
 * Parses CK-tile's `-mask=` value:
 * `0` | `n` no mask; `1` | `t` causal top-left; `2` | `b` causal bottom-right; `t:l,r` / `b:l,r` a
 * (left, right) window from the top-left / bottom-right (−1 = unbounded); `xt:w` / `xb:w`
 * xformers' window of w keys (left = ⌊w/2⌋, right = w − 1 − left; w ≤ 0 is causal); `g:y,x` CK's raw
 * generic coordinates. Postcondition (tested): `parseAttentionMaskSpec(formatAttentionMaskSpec(s))` equals s.
 * @throws AttentionMaskError naming `mask` and the rule for anything else.
 */
export function parseAttentionMaskSpec(text: string): AttentionMaskSpec {
  if (typeof text !== 'string') throw new AttentionMaskError('mask', 'must be a string', text);
  const s = text.trim();
  switch (s) {
    case '0':
    case 'n':
      return noMask;
    case '1':
    case 't':
      return causalTopLeft;
    case '2':
    case 'b':
      return causalBottomRight;
    default:
      break;
  }
  const colon = s.indexOf(':');
  if (colon < 0) throw new AttentionMaskError('mask', 'must be 0, 1, 2, t, b, t:l,r, b:l,r, xt:w, xb:w or g:y,x', text);
  const kind = s.slice(0, colon);
  const value = s.slice(colon + 1);
  switch (kind) {
    case 't':
    case 'b': {
      const [left, right] = parsePair(value, text);
      return slidingWindowMask(left, right, kind === 't' ? 'topLeft' : 'bottomRight');
    }
    case 'xt':
    case 'xb': {
      const w = parseInteger(value, 'mask.windowSize', text);
      const left = w > 0 ? Math.floor(w / 2) : -1;
      const right = w > 0 ? w - 1 - left : 0;
      return slidingWindowMask(left, right, kind === 'xt' ? 'topLeft' : 'bottomRight');
    }
    case 'g': {
      const [y, x] = parsePair(value, text);
      return checkAttentionMaskSpec({ kind: 'generic', y, x });
    }
    default:
      throw new AttentionMaskError('mask', 'the prefix before ":" must be t, b, xt, xb or g', text);
  }
}

/** The spec as a CK `-mask=` value: `0`, `t`, `b`, `t:l,r`, `b:l,r` or `g:y,x`. */
export function formatAttentionMaskSpec(spec: AttentionMaskSpec): string {
  const s = checkAttentionMaskSpec(spec);
  switch (s.kind) {
    case 'none':
      return '0';
    case 'window': {
      const a = s.alignment === 'topLeft' ? 't' : 'b';
      return isCausalMask(s) ? a : `${a}:${s.left},${s.right}`;
    }
    case 'generic':
      return `g:${s.y},${s.x}`;
  }
}
