import { badFlagTokens, captureCli } from '@tilekit/host/testing';
import { describe, expect, it } from 'vitest';
import { permuteParser } from './permuteExample.ts';

describe('example_permute: bad input', () => {
  it('every malformed flag (unknown, no value, wrong form, out of bounds or choices, bad fill or instance) is one line naming it, exit 2, before any work', async () => {
    const checked = [
      { token: '-init=zz', flag: '-init' },
      { token: '-instance=nope', flag: '-instance' },
    ];
    for (const { token, flag } of [...badFlagTokens(permuteParser), ...checked]) {
      const { code, stdout, stderr } = await captureCli(permuteParser, [token]);
      expect([code, stdout, stderr.split('\n').length], token).toEqual([2, '', 2]);
      expect(stderr, token).toMatch(new RegExp(`^error: .*${flag}`));
    }
  });

  it('sizes are at least 1 (-s=0 is an error, not an empty run)', async () => {
    for (const key of ['b', 'h', 's', 'd', 'm', 'n']) {
      expect((await captureCli(permuteParser, [`-${key}=0`])).stderr).toBe(`error: -${key}=0: must be at least 1\n`);
    }
  });
});
