import { defineFunction, float32, int32, pointer, type FunctionDef, type Target } from '@tilekit/codegen';
import type { DTypeName } from '@tilekit/numeric';
import { WarpGemmAtomError } from '../errors.ts';
import { asmOperands, asmStatement } from './asmStatement.ts';

/**
 * `tk_wgmma_fence_operands_<count>(float* d)`: an empty `asm volatile` that reads and writes every
 * accumulator register (CUTLASS's `warpgroup_fence_operand`). wgmma runs asynchronously on
 * registers the compiler believes it owns: call this on D right before `wgmma.fence` and right
 * after `wgmma.wait_group`, so no access to D is scheduled into the window in between. With
 * `accType` int32 (the integer wgmma's D) it is `tk_wgmma_fence_operands_s32_<count>(int* d)` with
 * `"+r"` operands; the fp32 default emits exactly what it always did.
 */
export function defineWgmmaFenceOperands(target: Target, count: number, accType: DTypeName = 'fp32'): FunctionDef {
  target.require('wgmma');
  if (!Number.isInteger(count) || count < 1 || count > 128)
    throw new WarpGemmAtomError('wgmma operand fence', 'count must be an integer in [1, 128] (N/2 of m64nNk16)', String(count));
  if (accType !== 'fp32' && accType !== 'int32')
    throw new WarpGemmAtomError('wgmma operand fence accType', 'must be fp32 or int32 (a 32-bit wgmma accumulator)', String(accType));
  const s32 = accType === 'int32';
  return defineFunction(
    {
      name: `tk_wgmma_fence_operands_${s32 ? 's32_' : ''}${count}`,
      qualifiers: target.functionQualifiers('force'),
      params: { d: pointer(s32 ? int32 : float32) },
    },
    (b) => {
      b.verbatim(asmStatement([], asmOperands(s32 ? '+r' : '+f', 'd', count), [], ['memory']));
    },
  );
}
