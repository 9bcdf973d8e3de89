// How a case's note names the kernels that ran: each with its registers, dynamic shared memory and spills.
import type { KernelResources } from '@tilekit/runtime';

/** A runner's kernel as the notes show it. */
export interface NotedKernel {
  readonly instance: string;
  readonly resources: KernelResources;
  readonly dynamicSharedBytes: number;
}

/** `<kernel>: R registers, S B dynamic smem, X B spills; …` */
export function kernelResourcesNote(kernels: readonly NotedKernel[]): string {
  return kernels
    .map(
      (k) =>
        `${k.instance}: ${k.resources.registers} registers, ${k.dynamicSharedBytes} B dynamic ` +
        `smem, ${k.resources.spillStores + k.resources.spillLoads} B spills`,
    )
    .join('; ');
}
