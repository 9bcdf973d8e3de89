import { badFlagTokens, captureCli } from '@tilekit/host/testing';
import { describe, expect, it } from 'vitest';
import { gemmParser, runGemmExample } from './gemmExample.ts';

const quiet = () => undefined;

describe('example_gemm: bad input', () => {
  it('every malformed flag (unknown, no value, wrong form, out of bounds or choices, bad fill or instance) is one line naming it, exit 2, before any work', async () => {
    const checked = [
      { token: '-init=zz', flag: '-init' },
      { token: '-instance=nope', flag: '-instance' },
    ];
    for (const { token, flag } of [...badFlagTokens(gemmParser), ...checked]) {
      const { code, stdout, stderr } = await captureCli(gemmParser, [token]);
      expect([code, stdout, stderr.split('\n').length], token).toEqual([2, '', 2]);
      expect(stderr, token).toMatch(new RegExp(`^error: .*${flag}`));
    }
  });

  it('inconsistent shapes fail before compiling, the value stated once', async () => {
    const { code, stderr } = await captureCli(gemmParser, ['-k=64', '-stride_a=8'], (args) => runGemmExample(args, quiet));
    expect([code, stderr]).toEqual([2, 'error: -stride_a=8: must be at least k = 64 (A is row-major M×K in layout tn)\n']);
  });
});
