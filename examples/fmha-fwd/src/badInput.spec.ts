import { badFlagTokens, captureCli } from '@tilekit/host/testing';
import { describe, expect, it } from 'vitest';
import { fmhaFwdParser, runFmhaFwdExample } from './fmhaFwdExample.ts';

const quiet = () => undefined;

describe('example_fmha_fwd: bad input', () => {
  it('every malformed flag (unknown, no value, wrong form, out of bounds or choices, bad mask) is one line naming it, exit 2, before any work', async () => {
    for (const { token, flag } of [...badFlagTokens(fmhaFwdParser), { token: '-mask=zz', flag: '-mask' }]) {
      const { code, stdout, stderr } = await captureCli(fmhaFwdParser, [token]);
      expect([code, stdout, stderr.split('\n').length], token).toEqual([2, '', 2]);
      expect(stderr, token).toMatch(new RegExp(`^error: .*${flag}`));
    }
  });

  it('golden: a bad mask states its value once', async () => {
    expect((await captureCli(fmhaFwdParser, ['-mask=zz'])).stderr).toBe(
      'error: -mask=zz: must be 0, 1, 2, t, b, t:l,r, b:l,r, xt:w, xb:w or g:y,x\n',
    );
  });

  it('shapes no problem has fail before compiling: no query rows (-s=0), heads that do not divide, an unsupported head dim', async () => {
    for (const [argv, message] of [
      [['-s=0'], /^error: -s=0: the problem needs at least one query row/],
      [['-mode=1', '-s=0,0'], /^error: -s=0,0: the problem needs at least one query row/],
      [['-h=6', '-h_k=4'], /^error: -h_k=4: must divide nheadQ = 6 \(GQA\/MQA: nheadQ % nheadK == 0\)$/],
      [['-d=100'], /^error: -d=100: must be one of 32, 64, 96, 128, 192, 256$/],
      [['-softcap=3', '-alibi=1'], /^error: -alibi=1 with -softcap=3: the kernels apply one score modifier at a time$/],
      [['-softcap=3', '-num_splits=2'], /^error: -num_splits=2: must be 1 or 'auto' with a score modifier/],
    ] as const) {
      const { code, stdout, stderr } = await captureCli(fmhaFwdParser, argv, (args) => runFmhaFwdExample(args, quiet));
      expect([code, stdout, stderr.split('\n').length], argv.join(' ')).toEqual([2, '', 2]);
      expect(stderr.trimEnd(), argv.join(' ')).toMatch(message);
    }
  });
});
