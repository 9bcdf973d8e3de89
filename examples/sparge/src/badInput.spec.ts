import { badFlagTokens, captureCli } from '@tilekit/host/testing';
import { describe, expect, it } from 'vitest';
import { runSpargeExample, spargeParser } from './spargeExample.ts';

const quiet = () => undefined;

describe('example_sparge: bad input', () => {
  it('every malformed flag (unknown, no value, wrong form, out of bounds or choices, per-head lists that are not numbers) is one line naming it, exit 2, before any work', async () => {
    const lists = ['topk', 'cdfthreshd', 'simthreshd1', 'pv_threshold'].map((key) => ({ token: `-${key}=0.5,x`, flag: `-${key}` }));
    for (const { token, flag } of [...badFlagTokens(spargeParser), ...lists]) {
      const { code, stdout, stderr } = await captureCli(spargeParser, [token]);
      expect([code, stdout, stderr.split('\n').length], token).toEqual([2, '', 2]);
      expect(stderr, token).toMatch(new RegExp(`^error: .*${flag}`));
    }
  });

  it('golden: -s=0 is an error at parse time; heads that do not divide, before compiling', async () => {
    expect((await captureCli(spargeParser, ['-s=0'])).stderr).toBe('error: -s=0: must be at least 1\n');
    const { code, stderr } = await captureCli(spargeParser, ['-h=6', '-h_k=4'], (args) => runSpargeExample(args, quiet));
    expect([code, stderr]).toEqual([2, 'error: -h_k=4: must divide nheadQ = 6 (GQA/MQA: nheadQ % nheadK == 0)\n']);
  });
});
