import { badFlagTokens, captureCli } from '@tilekit/host/testing';
import { describe, expect, it } from 'vitest';
import { dsaParser } from './dsaFlags.ts';

describe('example_dsa: bad input', () => {
  it('every malformed flag (unknown, no value, wrong form, out of bounds or choices) is one line naming it, exit 2, before any work', async () => {
    for (const { token, flag } of badFlagTokens(dsaParser)) {
      const { code, stdout, stderr } = await captureCli(dsaParser, [token]);
      expect([code, stdout, stderr.split('\n').length], token).toEqual([2, '', 2]);
      expect(stderr, token).toMatch(new RegExp(`^error: .*${flag}`));
    }
  });

  it('sizes are at least 1 (-L=0 is an error, not an empty run)', async () => {
    for (const key of ['b', 's', 'L', 'h', 'h_q', 'topk', 'next_n']) {
      expect((await captureCli(dsaParser, [`-${key}=0`])).stderr).toBe(`error: -${key}=0: must be at least 1\n`);
    }
  });
});
