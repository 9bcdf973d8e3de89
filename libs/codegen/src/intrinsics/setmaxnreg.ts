import { ArgumentError } from '@tilekit/numeric';
import { int32 } from '../cType.ts';
import type { Expr } from '../expr.ts';
import { variable } from '../ops.ts';
import type { Target } from '../target.ts';
import { callHelper, defineDeviceHelper, emitAsm, requireImmediate, requireIntrinsic } from './deviceHelper.ts';

const incHelper = defineDeviceHelper(
  {
    name: 'tk_setmaxnreg_inc',
    doc: "setmaxnreg.inc.sync.aligned.u32 N: raise this warp's register budget to N (warpgroup-collective).",
    templateParams: ['int N'],
  },
  (b) => emitAsm(b, { ptx: ['setmaxnreg.inc.sync.aligned.u32 %0;'], inputs: [['n', variable('N', int32)]] }),
);

const decHelper = defineDeviceHelper(
  {
    name: 'tk_setmaxnreg_dec',
    doc: "setmaxnreg.dec.sync.aligned.u32 N: lower this warp's register budget to N (warpgroup-collective).",
    templateParams: ['int N'],
  },
  (b) => emitAsm(b, { ptx: ['setmaxnreg.dec.sync.aligned.u32 %0;'], inputs: [['n', variable('N', int32)]] }),
);

/**
 * `setmaxnreg.{inc,dec}.sync.aligned.u32` (sm_90a): set the per-thread register budget of the
 * executing warpgroup to `registers` (a multiple of 8 in [24, 256]). Every warp of the warpgroup
 * must execute the same one; it only takes effect in a kernel with a register cap at entry
 * (`__launch_bounds__(threads, 1)`).
 */
export function setMaxNReg(target: Target, action: 'inc' | 'dec', registers: number): Expr {
  requireIntrinsic(target, 'setmaxnreg', `setmaxnreg.${action}`);
  if (action !== 'inc' && action !== 'dec') throw new ArgumentError('action', 'must be "inc" or "dec"', action);
  requireImmediate('registers', registers, 24, 256, 8);
  return callHelper(action === 'inc' ? incHelper : decHelper, [], [String(registers)]);
}
