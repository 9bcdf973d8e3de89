import type { Expr } from '../expr.ts';
import type { Target } from '../target.ts';
import { callHelper, defineDeviceHelper, emitAsm, requireIntrinsic } from './deviceHelper.ts';

const waitHelper = defineDeviceHelper(
  {
    name: 'tk_griddepcontrol_wait',
    doc: 'griddepcontrol.wait: wait for the prerequisite grids to complete and their memory to be visible.',
  },
  (b) => emitAsm(b, { ptx: ['griddepcontrol.wait;'], memory: true }),
);

const launchHelper = defineDeviceHelper(
  {
    name: 'tk_griddepcontrol_launch_dependents',
    doc: 'griddepcontrol.launch_dependents: let the dependent grid be scheduled once every CTA signalled or exited.',
  },
  (b) => emitAsm(b, { ptx: ['griddepcontrol.launch_dependents;'], memory: true }),
);

/** `griddepcontrol.wait` (sm_90, programmatic dependent launch); a no-op when the launch has no prerequisite. */
export function gridDependencyWait(target: Target): Expr {
  requireIntrinsic(target, 'griddepcontrol', 'griddepcontrol.wait');
  return callHelper(waitHelper, []);
}

/** `griddepcontrol.launch_dependents` (sm_90): a scheduling hint; implies no memory visibility. */
export function gridDependencyLaunchDependents(target: Target): Expr {
  requireIntrinsic(target, 'griddepcontrol', 'griddepcontrol.launch_dependents');
  return callHelper(launchHelper, []);
}
