import { describe, expect, it } from 'vitest';
import { DuplicateNameError } from './errors.ts';
import { int32, opaque, uint32 } from './cType.ts';
import { callFunction } from './function.ts';
import { call, shr } from './ops.ts';
import { printExpr } from './printExpr.ts';
import { include, snippet } from './requirement.ts';
import { SourceBuilder } from './sourceBuilder.ts';
import { sm90a } from './cudaTarget.ts';
import { gfx942 } from './hipTarget.ts';
import { host } from './hostTarget.ts';
import { sampleKernelsSource, hostSwizzleSource } from './testing/samples.ts';

describe('SourceBuilder', () => {
  it('renders a host program (golden)', async () => {
    await expect(hostSwizzleSource()).toMatchFileSnapshot('./__snapshots__/host_swizzle.cpp');
  });

  it('renders the sample kernel for sm_90a and gfx942 (golden)', async () => {
    await expect(sampleKernelsSource(sm90a)).toMatchFileSnapshot('./__snapshots__/sample_kernels.sm_90a.cu');
    await expect(sampleKernelsSource(gfx942)).toMatchFileSnapshot('./__snapshots__/sample_kernels.gfx942.hip');
  });

  it('is deterministic', () => {
    expect(hostSwizzleSource()).toBe(hostSwizzleSource());
    expect(sampleKernelsSource(sm90a)).toBe(sampleKernelsSource(sm90a));
  });

  it('collects each include and snippet once, dependencies first, from types and calls anywhere', () => {
    const base = snippet('base', ['int tk_base();']);
    const derived = snippet('derived', ['int tk_derived();'], [base, include('<cstdint>')]);
    const half = opaque('__half', [include('<cuda_fp16.h>')]);
    const src = new SourceBuilder({ dialect: sm90a });
    src.function({ name: 'f', returns: int32, params: { h: half } }, (b) => {
      b.let('a', int32, call('tk_derived', [], int32, { requires: [derived] }));
      b.let('c', int32, call('tk_base', [], int32, { requires: [base] }));
      b.return(shr(call('g', [], uint32, { requires: [include('<cuda_fp16.h>')] }), 1));
    });
    const text = src.render();
    expect(text.match(/#include <cuda_fp16.h>/g)).toHaveLength(1);
    expect(text.indexOf('#include <cstdint>')).toBeLessThan(text.indexOf('int tk_base();'));
    expect(text.indexOf('int tk_base();')).toBeLessThan(text.indexOf('int tk_derived();'));
    expect(text.match(/int tk_base\(\);/g)).toHaveLength(1);
  });

  it('qualifies names declared in namespaces for their callers', () => {
    const src = new SourceBuilder();
    src.namespace('tk', (ns) => {
      ns.namespace('detail', (inner) => {
        const g = inner.global('kOne', int32, 1, { storage: 'constexpr' });
        const f = inner.function({ name: 'one', returns: int32 }, (b) => b.return(g));
        expect(f.qualifiedName).toBe('tk::detail::one');
        expect(printExpr(callFunction(f, []))).toBe('tk::detail::one()');
        expect(printExpr(g)).toBe('tk::detail::kOne');
      });
    });
    expect(src.render()).toContain('}  // namespace detail\n\n}  // namespace tk');
  });

  it('keeps top-level names exact and unique', () => {
    const src = new SourceBuilder();
    src.function({ name: 'k' }, () => {});
    expect(() => src.function({ name: 'k' }, () => {})).toThrow(DuplicateNameError);
    expect(() => src.global('k', int32)).toThrow(DuplicateNameError);
    src.function({ name: 'f', params: {} }, (b) => {
      expect(b.let('k', int32, 1).name).toBe('k_1');
    });
  });
});

describe('SourceBuilder options', () => {
  it('indents by the requested width and keeps the dialect’s pragmas', () => {
    const src = new SourceBuilder({ dialect: host, indent: 4 });
    src.function({ name: 'f' }, (b) => b.forRange({ to: 4, unroll: 2 }, (l) => l.break()));
    expect(src.render()).toBe(
      ['void f() {', '    #pragma GCC unroll 2', '    for (int i = 0; i < 4; ++i) {', '        break;', '    }', '}', ''].join('\n'),
    );
  });
});
