// The wgmma async-group protocol leaves: fence before issuing, commit the issued group, wait on pending groups.
import { defineFunction, type FunctionDef, type Target } from '@tilekit/codegen';
import { WarpGemmAtomError } from '../errors.ts';
import { asmStatement } from './asmStatement.ts';

/** `wgmma.fence.sync.aligned` (before the first wgmma that reads registers or shared memory written since). */
export function defineWgmmaFence(target: Target): FunctionDef {
  target.require('wgmma');
  return defineFunction({ name: 'tk_wgmma_fence', qualifiers: target.functionQualifiers('force') }, (b) => {
    b.verbatim(asmStatement(['wgmma.fence.sync.aligned;'], [], [], ['memory']));
  });
}

/** `wgmma.commit_group.sync.aligned`: closes the group of wgmma operations issued so far. */
export function defineWgmmaCommitGroup(target: Target): FunctionDef {
  target.require('wgmma');
  return defineFunction({ name: 'tk_wgmma_commit_group', qualifiers: target.functionQualifiers('force') }, (b) => {
    b.verbatim(asmStatement(['wgmma.commit_group.sync.aligned;'], [], [], ['memory']));
  });
}

/** `wgmma.wait_group.sync.aligned N`: waits until at most `pending` groups are in flight (N is an immediate). */
export function defineWgmmaWaitGroup(target: Target, pending: number): FunctionDef {
  target.require('wgmma');
  if (!Number.isInteger(pending) || pending < 0 || pending > 7)
    throw new WarpGemmAtomError('wgmma.wait_group', 'pending must be an integer in [0, 7]', String(pending));
  return defineFunction({ name: `tk_wgmma_wait_group_${pending}`, qualifiers: target.functionQualifiers('force') }, (b) => {
    b.verbatim(asmStatement([`wgmma.wait_group.sync.aligned ${pending};`], [], [], ['memory']));
  });
}
