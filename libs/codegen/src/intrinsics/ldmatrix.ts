import { ArgumentError } from '@tilekit/numeric';
import { pointer, typeToString, uint32, voidType } from '../cType.ts';
import { CodegenTypeError } from '../errors.ts';
import type { Expr } from '../expr.ts';
import { index } from '../ops.ts';
import type { Target } from '../target.ts';
import { callHelper, defineDeviceHelper, emitAsm, requireAddress, requireIntrinsic } from './deviceHelper.ts';
import type { DeviceHelper } from './deviceHelper.ts';
import { sharedAddressHelper } from './sharedAddress.ts';

/** How many 8x8 b16 matrices one `ldmatrix` loads. */
export type LdmatrixCount = 1 | 2 | 4;

/** Options of `ldmatrix`. */
export interface LdmatrixOptions {
  readonly count: LdmatrixCount;
  /** `.trans`: each thread gets a column pair instead of a row pair. */
  readonly trans?: boolean;
  /** `unsigned int` array (or pointer to one) receiving `count` registers. */
  readonly dst: Expr;
  /**
   * This thread's row address in shared memory (16-byte aligned): threads 8i..8i+7 give the 8
   * rows of matrix i (i < count); the other threads' addresses are ignored.
   */
  readonly src: Expr;
}

const helpers = new Map<string, DeviceHelper>();

function ldmatrixHelper(count: LdmatrixCount, trans: boolean): DeviceHelper {
  const name = `tk_ldmatrix_x${count}${trans ? '_trans' : ''}`;
  let h = helpers.get(name);
  if (h === undefined) {
    h = defineDeviceHelper(
      {
        name,
        doc: `ldmatrix.sync.aligned.m8n8.x${count}${trans ? '.trans' : ''}.shared.b16: ${count} 8x8 b16 matrices, one 32-bit register each per thread (warp-collective).`,
        params: { dst: pointer(uint32), src: pointer(voidType, { const: true }) },
        requires: [sharedAddressHelper.requirement],
      },
      (b, { dst, src }) => {
        const addr = b.let('addr', uint32, callHelper(sharedAddressHelper, [src]));
        const regs = Array.from({ length: count }, (_, i) => `%${i}`).join(', ');
        emitAsm(b, {
          ptx: [`ldmatrix.sync.aligned.m8n8.x${count}${trans ? '.trans' : ''}.shared.b16 {${regs}}, [%${count}];`],
          outputs: Array.from({ length: count }, (_, i) => ['=r', index(dst, i)] as const),
          inputs: [['r', addr]],
          memory: true,
        });
      },
    );
    helpers.set(name, h);
  }
  return h;
}

/**
 * Warp-collective `ldmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans].shared.b16` (sm_80 set; PTX
 * since sm_75): loads `count` 8x8 matrices of 16-bit elements from shared memory. Without
 * `.trans`, lane l's register i holds row l/4, elements 2(l%4) and 2(l%4)+1 of matrix i (low
 * half first); with `.trans`, the same positions of the transposed matrix. All 32 lanes must
 * execute it. Throws `TargetFeatureError` off CUDA sm_80+.
 */
export function ldmatrix(target: Target, options: LdmatrixOptions): Expr {
  requireIntrinsic(target, 'ldmatrix', 'ldmatrix');
  const { count, dst, src } = options;
  if (count !== 1 && count !== 2 && count !== 4) throw new ArgumentError('count', 'must be 1, 2 or 4', count);
  const element = dst.type.kind === 'array' ? dst.type.element : dst.type.kind === 'pointer' ? dst.type.pointee : null;
  if (element === null || element.kind !== 'int' || element.name !== 'uint32' || (dst.type.kind === 'pointer' && dst.type.constPointee)) {
    throw new CodegenTypeError('dst', 'must be an array of (or a non-const pointer to) unsigned int', typeToString(dst.type));
  }
  if (dst.type.kind === 'array' && dst.type.length < count)
    throw new ArgumentError('dst', `must hold at least ${count} registers`, dst.type.length);
  requireAddress('src', src);
  return callHelper(ldmatrixHelper(count, options.trans ?? false), [dst, src]);
}
