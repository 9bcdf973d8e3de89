import type { DTypeName } from '@tilekit/numeric';
import { WarpGemmAtomError } from '../errors.ts';

const ptxType: Partial<Record<DTypeName, string>> = { fp16: 'f16', bf16: 'bf16' };

/** The PTX type suffix (`f16`, `bf16`) of a 16-bit float MMA input; any other dtype is a `WarpGemmAtomError` naming `what`. */
export function ptxInputType(what: string, dtype: DTypeName): string {
  const p = ptxType[dtype];
  if (p === undefined) throw new WarpGemmAtomError(what, 'input dtype must be fp16 or bf16', dtype);
  return p;
}
