import fc from 'fast-check';
import { ArgumentError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import {
  AttentionMaskError,
  causalBottomRight,
  causalTopLeft,
  checkAttentionMaskSpec,
  formatAttentionMaskSpec,
  isCausalMask,
  noMask,
  parseAttentionMaskSpec,
  slidingWindowMask,
  type AttentionMaskSpec,
} from './attentionMaskSpec.ts';

const specArb: fc.Arbitrary<AttentionMaskSpec> = fc.oneof(
  fc.constant(noMask),
  fc.record({
    kind: fc.constant('window' as const),
    alignment: fc.constantFrom('topLeft' as const, 'bottomRight' as const),
    left: fc.integer({ min: -1, max: 5000 }),
    right: fc.integer({ min: -1, max: 5000 }),
  }),
  fc.record({ kind: fc.constant('generic' as const), y: fc.integer({ min: -5000, max: 5000 }), x: fc.integer({ min: -5000, max: 5000 }) }),
);

describe("CK's -mask= strings", () => {
  it('parses the single-token forms: 0/n none, 1/t causal top-left, 2/b causal bottom-right', () => {
    expect(parseAttentionMaskSpec('0')).toEqual(noMask);
    expect(parseAttentionMaskSpec('n')).toEqual(noMask);
    expect(parseAttentionMaskSpec('1')).toEqual(causalTopLeft);
    expect(parseAttentionMaskSpec('t')).toEqual(causalTopLeft);
    expect(parseAttentionMaskSpec('2')).toEqual(causalBottomRight);
    expect(parseAttentionMaskSpec(' b ')).toEqual(causalBottomRight);
  });

  it('parses windows (negative = unbounded, normalized to -1), xformers windows and generic coordinates', () => {
    expect(parseAttentionMaskSpec('t:3,0')).toEqual({ kind: 'window', alignment: 'topLeft', left: 3, right: 0 });
    expect(parseAttentionMaskSpec('b:-1,7')).toEqual({ kind: 'window', alignment: 'bottomRight', left: -1, right: 7 });
    expect(parseAttentionMaskSpec('b:-9,2')).toEqual({ kind: 'window', alignment: 'bottomRight', left: -1, right: 2 });
    // xformers: w = 5 → left 2, right 2; w = 4 → left 2, right 1; w ≤ 0 → causal.
    expect(parseAttentionMaskSpec('xt:5')).toEqual({ kind: 'window', alignment: 'topLeft', left: 2, right: 2 });
    expect(parseAttentionMaskSpec('xb:4')).toEqual({ kind: 'window', alignment: 'bottomRight', left: 2, right: 1 });
    expect(parseAttentionMaskSpec('xt:0')).toEqual(causalTopLeft);
    expect(parseAttentionMaskSpec('g:4,-2')).toEqual({ kind: 'generic', y: 4, x: -2 });
    expect(isCausalMask(parseAttentionMaskSpec('t:-1,0'))).toBe(true);
    expect(isCausalMask(parseAttentionMaskSpec('t:0,0'))).toBe(false);
  });

  it('format ∘ parse round-trips every spec', () => {
    fc.assert(
      fc.property(specArb, (spec) => {
        const s = checkAttentionMaskSpec(spec);
        expect(parseAttentionMaskSpec(formatAttentionMaskSpec(s))).toEqual(s);
      }),
    );
  });

  it('rejects bad strings with a typed error naming the argument', () => {
    for (const bad of [
      '',
      '3',
      'x',
      't:',
      't:1',
      't:1,2,3',
      't:a,1',
      't:1.5,2',
      'q:1,2',
      'xt:',
      'xt:1,2',
      'g:1',
      't:99999999999,0',
      ':1,2',
    ]) {
      expect(() => parseAttentionMaskSpec(bad), bad).toThrow(AttentionMaskError);
    }
    expect(() => parseAttentionMaskSpec('t:a,1')).toThrow(/^mask\.left: must be an integer/);
    expect(() => parseAttentionMaskSpec('q:1,2')).toThrow(/^mask: the prefix before ":" must be t, b, xt, xb or g/);
    try {
      parseAttentionMaskSpec('t:1');
    } catch (e) {
      expect(e).toBeInstanceOf(ArgumentError);
      expect((e as ArgumentError).argument).toBe('mask');
    }
  });

  it('checks specs built in code', () => {
    expect(() => slidingWindowMask(1.5, 0)).toThrow(/mask\.left: must be an integer/);
    expect(() => slidingWindowMask(0, 0, 'middle' as never)).toThrow(/mask\.alignment: must be one of topLeft, bottomRight/);
    expect(() => checkAttentionMaskSpec({ kind: 'diagonal' } as never)).toThrow(/mask\.kind/);
    expect(() => checkAttentionMaskSpec({ kind: 'generic', y: 1, x: 2 ** 31 })).toThrow(/mask\.x/);
    expect(Object.isFrozen(slidingWindowMask(2, 3))).toBe(true);
  });
});
