// The ping-pong instances: names, and the claim that ping-pong is the softmax-overlapped key loop
// with turns around its GEMM issues and nothing else (so the GPU must find them bitwise equal).
import { FMHA_FWD_PINGPONG_SCHEDULE, FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE } from '@tilekit/fmha';
import { describe, expect, it } from 'vitest';
import { FMHA_FWD_CATALOG } from './fmhaFwdCatalog.ts';
import { FMHA_FWD_PINGPONG_CATALOG } from './fmhaFwdPingPongCatalog.ts';

/** The consumers' key loop of an instance's source: from the schedule's first comment to the epilogue. */
function keyLoop(source: string): string {
  const from = source.indexOf('// intra-warpgroup overlap');
  const to = source.indexOf('// epilogue', from);
  expect(from).toBeGreaterThan(0);
  expect(to).toBeGreaterThan(from);
  return source.slice(from, to);
}

/** The loop without the turns: the ping-pong comments, the named-barrier calls and their one-warpgroup guards. */
function withoutTurns(loop: string): string {
  return loop
    .replace(/\n *if \(warpgroup == [01]\) \{\n *tk_named_barrier_(?:sync|arrive)\([^\n]*\n *\}/g, '')
    .replace(/\n *(?:\/\/ ping-pong:|tk_named_barrier_(?:sync|arrive)\()[^\n]*/g, '');
}

describe('FMHA_FWD_PINGPONG_CATALOG', () => {
  it('has one ping-pong instance per softmax-overlapped one-pass instance of the dense catalog, named …_pingpong', () => {
    const overlapped = FMHA_FWD_CATALOG.filter((i) => i.policy.schedule === FMHA_FWD_SOFTMAX_OVERLAP_SCHEDULE && !i.policy.splitKv);
    expect(FMHA_FWD_PINGPONG_CATALOG.map((i) => i.name)).toEqual(overlapped.map((i) => `${i.name}_pingpong`));
    for (const i of FMHA_FWD_PINGPONG_CATALOG) expect(i.policy.schedule).toBe(FMHA_FWD_PINGPONG_SCHEDULE);
    expect(new Set(FMHA_FWD_PINGPONG_CATALOG.map((i) => i.key.hash)).size).toBe(FMHA_FWD_PINGPONG_CATALOG.length);
  });

  it('emits the overlapped key loop plus six turn sites (first S, S with the previous P·V, the last P·V) and the start and finish', () => {
    for (const pp of FMHA_FWD_PINGPONG_CATALOG.slice(0, 4)) {
      const base = FMHA_FWD_CATALOG.find((i) => `${i.name}_pingpong` === pp.name)!;
      const loop = keyLoop(pp.source());
      expect(loop.match(/tk_named_barrier_sync\(warpgroup \+ 13, 256\)/g)).toHaveLength(3);
      expect(loop.match(/tk_named_barrier_arrive\(-warpgroup \+ 14, 256\)/g)).toHaveLength(3);
      expect(loop).toMatch(/if \(warpgroup == 1\) \{\n *tk_named_barrier_arrive\(13, 256\);/);
      expect(loop).toMatch(/if \(warpgroup == 0\) \{\n *tk_named_barrier_sync\(13, 256\);/);
      expect(withoutTurns(loop)).toBe(keyLoop(base.source()));
    }
  });
});
