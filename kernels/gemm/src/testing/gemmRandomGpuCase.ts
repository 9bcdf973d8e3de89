// The case runner of the randomized GEMM GPU spec: one configuration on its instance against the CPU
// reference (referenceGemm, fp32 accumulation) within @tilekit/numeric's CK-style thresholds for K
// accumulations (plus a few fp32 ulps for gelu_tanh/silu), as gemm.gpu.spec.ts judges them; every C
// element outside the product (ldc and batch gaps) must stay untouched. Harness code for *.gpu.spec.ts.
import assert from 'node:assert/strict';
import { referenceGemm, type GemmActivation } from '@tilekit/gemm';
import { absoluteThreshold, decode, relativeThreshold } from '@tilekit/numeric';
import type { Device } from '@tilekit/runtime';
import type { GemmKernel } from '../gemmLauncher.ts';
import { checkGemmProblem, formatGemmProblem, gemmOperandElements, gemmReferenceArgs, type CheckedGemmProblem } from '../gemmProblem.ts';
import { gemmTestValues } from './gemmTestValues.ts';
import type { GemmRandomConfig } from './randomGemmConfig.ts';

/** C's fill before a run: a NaN in fp16 and bf16, so an element of the product left unwritten fails. */
export const GEMM_RANDOM_C_SENTINEL = 0xffff;

/** A problem's inputs (bits to upload), its reference C (in C's strides) and the tolerance. */
export interface GemmRandomReference {
  readonly a: Uint16Array;
  readonly b: Uint16Array;
  readonly bias?: Uint16Array;
  readonly c: Float64Array;
  readonly atol: number;
  readonly rtol: number;
}

/** Largest |x| over the product's elements of `c` (in C's strides). */
function productMax(p: CheckedGemmProblem, c: Float64Array): number {
  let max = 0;
  for (let x = 0; x < p.batch; x++)
    for (let i = 0; i < p.m; i++) for (let j = 0; j < p.n; j++) max = Math.max(max, Math.abs(c[x * p.batchStrideC + i * p.ldc + j]!));
  return max;
}

/**
 * Seeded inputs rounded to the dtype and the reference C = act(alpha·A·B + bias); the tolerance
 * scales with the largest value before the activation, plus 16 fp32 ulps at its binade for the
 * device's tanhf/expf in gelu_tanh and silu.
 */
export function gemmRandomReference(p: CheckedGemmProblem): GemmRandomReference {
  const elems = gemmOperandElements(p);
  const a = gemmTestValues(elems.a, p.dtype, p.m * 31 + p.k);
  const b = gemmTestValues(elems.b, p.dtype, p.n * 17 + p.k);
  const bias = p.bias ? gemmTestValues(p.n, p.dtype, p.n * 7 + 3) : undefined;
  const functor = p.alpha !== 1 || p.bias || p.activation !== 'none';
  const product = (activation: GemmActivation): Float64Array =>
    referenceGemm({
      ...gemmReferenceArgs(p, a.values, b.values),
      ...(functor ? { epilogue: { alpha: p.alpha, activation, ...(bias === undefined ? {} : { bias: bias.values }) } } : {}),
    });
  const c = product(p.activation);
  const max = productMax(p, p.activation === 'none' ? c : product('none'));
  const slack = p.activation === 'gelu_tanh' || p.activation === 'silu' ? 16 * 2 ** -23 * 2 ** Math.floor(Math.log2(Math.max(max, 1))) : 0;
  return {
    a: a.bits,
    b: b.bits,
    ...(bias === undefined ? {} : { bias: bias.bits }),
    c,
    rtol: relativeThreshold(p.dtype, p.dtype, 'fp32', p.k),
    atol: absoluteThreshold(p.dtype, p.dtype, 'fp32', max, p.k) + slack,
  };
}

/** What `checkGemmRandomOutput` found: elements wrong (inside the product: beyond the tolerance; outside: written), the first, the worst error. */
export interface GemmRandomCheck {
  readonly bad: number;
  readonly first: string;
  readonly worst: number;
}

/** Compares the kernel's C (bit patterns over C's span) with the reference inside the product and with the sentinel outside it. */
export function checkGemmRandomOutput(p: CheckedGemmProblem, ref: GemmRandomReference, out: Uint16Array): GemmRandomCheck {
  const count = gemmOperandElements(p).c;
  const inProduct = new Uint8Array(count);
  for (let x = 0; x < p.batch; x++)
    for (let i = 0; i < p.m; i++) inProduct.fill(1, x * p.batchStrideC + i * p.ldc, x * p.batchStrideC + i * p.ldc + p.n);
  let bad = 0;
  let first = '';
  let worst = 0;
  for (let at = 0; at < count; at++) {
    if (inProduct[at] === 0) {
      if (out[at] === GEMM_RANDOM_C_SENTINEL) continue;
      bad++;
      first ||= `element ${at} outside the product written: 0x${out[at]!.toString(16)}`;
      continue;
    }
    const got = decode(p.dtype, out[at]!);
    const err = Math.abs(got - ref.c[at]!);
    worst = Math.max(worst, Number.isNaN(err) ? Infinity : err);
    if (err <= ref.atol + ref.rtol * Math.abs(ref.c[at]!)) continue;
    bad++;
    const x = Math.floor(at / Math.max(1, p.batchStrideC));
    const i = Math.floor((at - x * p.batchStrideC) / p.ldc);
    first ||= `C[${p.batch === 1 ? 0 : x}](${i}, ${at - x * p.batchStrideC - i * p.ldc}) = ${got}, reference ${ref.c[at]}`;
  }
  return { bad, first, worst };
}

/**
 * Runs `config` on `kernel` (device 0; a persistent run on `persistentSmCount` SMs) and checks every
 * element of C's span with `checkGemmRandomOutput`. Asserts and returns a summary line.
 */
export function runGemmRandomCase(config: GemmRandomConfig, kernel: GemmKernel, device: Device): string {
  const p = checkGemmProblem(config.problem);
  const ref = gemmRandomReference(p);
  const a = device.upload(ref.a);
  const b = device.upload(ref.b);
  const c = device.alloc(gemmOperandElements(p).c * 2).fill(0xff);
  const bias = ref.bias === undefined ? undefined : device.upload(ref.bias);
  try {
    kernel.run(
      p,
      { a, b, c, ...(bias === undefined ? {} : { bias }) },
      config.persistentSmCount === undefined ? {} : { smCount: config.persistentSmCount },
    );
    const found = checkGemmRandomOutput(p, ref, new Uint16Array(c.copyToHost().buffer));
    assert.equal(
      found.bad,
      0,
      `${kernel.instance.name} on ${formatGemmProblem(p)}: ${found.bad} elements wrong (atol ${ref.atol}, rtol ${ref.rtol}); first: ${found.first}`,
    );
    return `${kernel.instance.name}: max |err| ${found.worst.toExponential(2)} (atol ${ref.atol.toExponential(2)})`;
  } finally {
    device.synchronize();
    for (const buf of [a, b, c, bias]) buf?.dispose();
  }
}
