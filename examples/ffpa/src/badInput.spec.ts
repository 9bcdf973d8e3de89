import { badFlagTokens, captureCli } from '@tilekit/host/testing';
import { describe, expect, it } from 'vitest';
import { ffpaParser, runFfpaExample } from './ffpaExample.ts';

describe('example_ffpa: bad input', () => {
  it('every malformed flag (unknown, no value, wrong form, out of bounds or choices, bad mask) is one line naming it, exit 2, before any work', async () => {
    for (const { token, flag } of [...badFlagTokens(ffpaParser), { token: '-mask=zz', flag: '-mask' }]) {
      const { code, stdout, stderr } = await captureCli(ffpaParser, [token]);
      expect([code, stdout, stderr.split('\n').length], token).toEqual([2, '', 2]);
      expect(stderr, token).toMatch(new RegExp(`^error: .*${flag}`));
    }
  });

  it('-bwd takes a value like every flag (-bwd=1): bare -bwd or -bwd=yes is one line naming it, exit 2', async () => {
    for (const [token, message] of [
      ['-bwd', /^error: -bwd needs a value: write -bwd=<bool> \(default false\)\n$/],
      ['-bwd=yes', /^error: .*-bwd/],
    ] as const) {
      const { code, stdout, stderr } = await captureCli(ffpaParser, [token]);
      expect([code, stdout, stderr.split('\n').length], token).toEqual([2, '', 2]);
      expect(stderr, token).toMatch(message);
    }
  });

  it("problems FFPA rejects: checkFfpaProblem's typed error naming the flag, exit 2, nothing logged or compiled", async () => {
    for (const [argv, message] of [
      [['-d=128'], /^error: -d=128: must be one of 320, 384, 448, 512, 576, 640, 704, 768, 832, 896, 960, 1024$/],
      [['-d=100'], /^error: -d=100: must be one of 320, 384, /],
      [['-d=576', '-d_v=256'], /^error: -d_v=256: must be 576 or 512 with hdimQ = 576$/],
      [['-d=512', '-d_v=1024'], /^error: -d_v=1024: must be 512 with hdimQ = 512$/],
      [['-h=6', '-h_k=4'], /^error: -h_k=4: must divide nheadQ = 6 \(GQA\/MQA: nheadQ % nheadK == 0\)$/],
      [['-mask=g:3,4'], /^error: -mask=g:3,4: must be a window mask or none/],
      [['-s=0'], /^error: -s=0: the problem needs at least one query row$/],
      [['-mode=1', '-s=0,0'], /^error: -s=0,0: the problem needs at least one query row$/],
      [['-s=1,2'], /^error: -s=1,2: batch mode takes one length/],
    ] as const) {
      const lines: string[] = [];
      const { code, stdout, stderr } = await captureCli(ffpaParser, argv, (args) => runFfpaExample(args, (l) => lines.push(l)));
      expect([code, stdout, stderr.split('\n').length, lines], argv.join(' ')).toEqual([2, '', 2, []]);
      expect(stderr.trimEnd(), argv.join(' ')).toMatch(message);
    }
  });
});
