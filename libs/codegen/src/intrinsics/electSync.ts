import { bool, uint32 } from '../cType.ts';
import type { Expr } from '../expr.ts';
import { lit, ne, toExpr } from '../ops.ts';
import type { ExprLike } from '../ops.ts';
import type { Target } from '../target.ts';
import { callHelper, defineDeviceHelper, emitAsm, requireInteger, requireIntrinsic } from './deviceHelper.ts';

const electHelper = defineDeviceHelper(
  {
    name: 'tk_elect_sync',
    doc: 'elect.sync _|p, membermask: true on exactly one (the same) lane of the mask.',
    returns: bool,
    params: { mask: uint32 },
  },
  (b, { mask }) => {
    const elected = b.declare('elected', uint32);
    emitAsm(b, {
      ptx: ['.reg .pred leader;', 'elect.sync _|leader, %1;', 'selp.u32 %0, 1, 0, leader;'],
      outputs: [['=r', elected]],
      inputs: [['r', mask]],
    });
    b.return(ne(elected, 0));
  },
);

/**
 * `elect.sync` (sm_90): a `bool` true on one deterministic leader lane of `mask` (default all 32
 * lanes), false elsewhere; every lane in `mask` must execute it.
 */
export function electSync(target: Target, mask: ExprLike = lit(0xffffffff, uint32)): Expr {
  requireIntrinsic(target, 'elect-sync', 'elect.sync');
  const m = toExpr(mask, lit(0, uint32));
  requireInteger('mask', m);
  return callHelper(electHelper, [m]);
}
