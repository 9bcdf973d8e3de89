import { describe, expect, it } from 'vitest';
import { BlockBuilder } from '../blockBuilder.ts';
import { float32, float64, int64, pointer, uint32, uint8 } from '../cType.ts';
import { CodegenTypeError } from '../errors.ts';
import { add, lit, variable } from '../ops.ts';
import { renderStmts } from '../render.ts';
import { opaqueValue } from './opaqueValue.ts';

describe('opaqueValue', () => {
  it('declares a mutable variable and claims to rewrite it with an empty volatile asm of its register class', () => {
    const b = new BlockBuilder();
    const v = opaqueValue(b, 'addr', uint32, add(lit(8, uint32), lit(4096, uint32)));
    opaqueValue(b, 'wide', int64, 7n);
    const base = b.let('base', pointer(uint8), variable('smem', pointer(uint8)));
    opaqueValue(b, 'ptr', pointer(uint8), add(base, 64));
    opaqueValue(b, 'x', float32, 1.5);
    const text = renderStmts(b.statements);
    expect(text).toContain('asm volatile("" : "+r"(addr));');
    expect(text).toContain('asm volatile("" : "+l"(wide));');
    expect(text).toContain('asm volatile("" : "+l"(ptr));');
    expect(text).toContain('asm volatile("" : "+f"(x));');
    expect(text).not.toMatch(/const unsigned int addr/);
    expect(v.kind).toBe('var');
  });

  it('refuses a type without a register constraint, naming the argument', () => {
    expect(() => opaqueValue(new BlockBuilder(), 'd', float64, 1)).toThrow(CodegenTypeError);
    expect(() => opaqueValue(new BlockBuilder(), 'd', float64, 1)).toThrow(/opaqueValue type/);
  });
});
