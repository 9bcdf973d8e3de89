import { CodegenTypeError } from '../errors.ts';
import type { BlockBuilder } from '../blockBuilder.ts';
import { typeToString, type CType } from '../cType.ts';
import type { Expr } from '../expr.ts';
import type { ExprLike } from '../ops.ts';
import { emitAsm } from './deviceHelper.ts';

/** The inline-asm constraint of a register of type `t`, or undefined when `t` has none. */
function registerConstraint(t: CType): string | undefined {
  if (t.kind === 'int' && t.bits <= 32) return 'r';
  if ((t.kind === 'int' && t.bits === 64) || t.kind === 'pointer') return 'l';
  if (t.kind === 'float' && t.bits === 32) return 'f';
  return undefined;
}

/**
 * Declares `name` = `value` and hides it from the optimizer behind an empty `asm volatile` that
 * claims to rewrite it: the compiler can no longer treat it as a constant or a loop invariant, so
 * what is computed from it (wgmma matrix descriptors of a fixed shared-memory tile, say) is
 * recomputed where it is used instead of being hoisted out of a loop and held in registers for the
 * whole loop. Costs no instruction. Returns the variable.
 * @throws CodegenTypeError for a type without a register constraint (integers up to 64 bits, pointers, float).
 */
export function opaqueValue(b: BlockBuilder, name: string, type: CType, value: ExprLike): Expr {
  const constraint = registerConstraint(type);
  if (constraint === undefined)
    throw new CodegenTypeError('opaqueValue type', 'must be an integer of at most 64 bits, a pointer or a float', typeToString(type));
  const v = b.declare(name, type, value, { storage: 'mutable' });
  emitAsm(b, { ptx: [''], outputs: [[`+${constraint}`, v]] });
  return v;
}
