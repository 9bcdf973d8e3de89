import { badFlagTokens, captureCli } from '@tilekit/host/testing';
import { describe, expect, it } from 'vitest';
import { fmhaBwdParser, runFmhaBwdExample } from './fmhaBwdExample.ts';

const quiet = () => undefined;

describe('example_fmha_bwd: bad input', () => {
  it('every malformed flag (unknown, no value, wrong form, out of bounds or choices, bad mask) is one line naming it, exit 2, before any work', async () => {
    for (const { token, flag } of [...badFlagTokens(fmhaBwdParser), { token: '-mask=zz', flag: '-mask' }]) {
      const { code, stdout, stderr } = await captureCli(fmhaBwdParser, [token]);
      expect([code, stdout, stderr.split('\n').length], token).toEqual([2, '', 2]);
      expect(stderr, token).toMatch(new RegExp(`^error: .*${flag}`));
    }
  });

  it('-dbias, no query rows and heads that do not divide fail before compiling: one line, exit 2', async () => {
    for (const [argv, message] of [
      [['-dbias=1'], /^error: -dbias: dBias is not supported/],
      [['-s=0'], /^error: -s=0: the problem needs at least one query row/],
      [['-h=6', '-h_k=4'], /^error: -h_k=4: must divide nheadQ = 6/],
    ] as const) {
      const { code, stdout, stderr } = await captureCli(fmhaBwdParser, argv, (args) => runFmhaBwdExample(args, quiet));
      expect([code, stdout, stderr.split('\n').length], argv.join(' ')).toEqual([2, '', 2]);
      expect(stderr, argv.join(' ')).toMatch(message);
    }
  });
});
