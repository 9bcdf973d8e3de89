/**
 * Per-kernel resource usage as ptxas reports it with `-v` (nvcc `-Xptxas -v`, NVRTC
 * `--ptxas-options=-v`). Sizes are bytes; `registers` is per thread; `sharedBytes` is static
 * shared memory; `stackFrame` and spills are per thread; `constantBytes` sums every cmem bank.
 */
export interface KernelResources {
  readonly registers: number;
  readonly spillStores: number;
  readonly spillLoads: number;
  readonly sharedBytes: number;
  readonly stackFrame: number;
  readonly constantBytes: number;
  readonly barriers: number;
}

/** All zeros: what a kernel with no ptxas report is given. */
export const NO_RESOURCES: KernelResources = Object.freeze({
  registers: 0,
  spillStores: 0,
  spillLoads: 0,
  sharedBytes: 0,
  stackFrame: 0,
  constantBytes: 0,
  barriers: 0,
});

const ENTRY = /Compiling entry function '([^']+)'/;
const PROPERTIES = /Function properties for ([^\s:]+)/;
const FRAME = /(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads/;
const USED = /Used (\d+) registers(.*)$/;

/**
 * Parses a compiler log into entry name → resources, for every entry function ptxas compiled
 * (device functions are ignored). Postcondition (golden tests): each entry's registers, spills,
 * stack frame, shared and constant sizes equal the numbers printed for it; an empty map when
 * the log holds no ptxas report.
 */
export function parsePtxasInfo(log: string): Map<string, KernelResources> {
  const entries = new Map<string, { -readonly [K in keyof KernelResources]: KernelResources[K] }>();
  const frames = new Map<string, { stackFrame: number; spillStores: number; spillLoads: number }>();
  let entry: string | undefined;
  let properties: string | undefined;
  for (const line of log.split(/\r?\n/)) {
    const entryMatch = ENTRY.exec(line);
    if (entryMatch) {
      entry = entryMatch[1]!;
      if (!entries.has(entry)) entries.set(entry, { ...NO_RESOURCES });
      continue;
    }
    const propertiesMatch = PROPERTIES.exec(line);
    if (propertiesMatch) {
      properties = propertiesMatch[1]!;
      continue;
    }
    const frameMatch = FRAME.exec(line);
    if (frameMatch && properties !== undefined) {
      frames.set(properties, {
        stackFrame: Number(frameMatch[1]),
        spillStores: Number(frameMatch[2]),
        spillLoads: Number(frameMatch[3]),
      });
      continue;
    }
    const usedMatch = USED.exec(line);
    if (usedMatch && entry !== undefined) {
      const target = entries.get(entry)!;
      target.registers = Number(usedMatch[1]);
      const rest = usedMatch[2] ?? '';
      target.barriers = Number(/used (\d+) barriers/.exec(rest)?.[1] ?? 0);
      target.sharedBytes = Number(/(\d+) bytes smem/.exec(rest)?.[1] ?? 0);
      target.constantBytes = [...rest.matchAll(/(\d+) bytes cmem\[\d+\]/g)].reduce((sum, m) => sum + Number(m[1]), 0);
    }
  }
  const out = new Map<string, KernelResources>();
  for (const [name, resources] of entries) {
    out.set(name, Object.freeze({ ...resources, ...frames.get(name) }));
  }
  return out;
}
