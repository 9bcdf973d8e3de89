import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadAddon } from './addon.ts';
import type { CudaArch } from './arch.ts';
import { CachingCompiler, rejectFlags, type CompilerOptions, type CompilerRun } from './compiler.ts';
import { ENTRY_FILES } from './kernelCache.ts';
import { CompilerUnavailableError } from './nvccCompiler.ts';
import { probe } from './probe.ts';

export interface NvrtcOptions extends CompilerOptions {
  /** Header directories (default: `$CUDA_HOME/include` or /usr/local/cuda/include when present). */
  readonly includeDirs?: readonly string[];
}

const FORBIDDEN = [/^-arch(=|$)/, /^--gpu-architecture(=|$)/, /^-o$/];

// NVRTC_ERROR_INVALID_OPTION: an NVRTC too old for --ptxas-options.
const NVRTC_ERROR_INVALID_OPTION = 5;
const PTXAS_VERBOSE = '--ptxas-options=-v';

function defaultIncludeDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  for (const home of [env['CUDA_HOME'], env['CUDA_PATH'], '/usr/local/cuda']) {
    if (home && existsSync(join(home, 'include', 'cuda_fp16.h'))) return [join(home, 'include')];
  }
  return [];
}

/**
 * Compiles in-process with NVRTC (dlopened by the addon, `libnvrtc.so.13` then `.12`) on a libuv
 * worker thread: `--gpu-architecture=<arch>` yields a cubin directly, plus PTX. The source is
 * still written to the cache entry so errors point at a real file. Only where NVRTC exists.
 */
export class NvrtcCompiler extends CachingCompiler {
  readonly kind = 'nvrtc' as const;
  readonly includeDirs: readonly string[];

  /** True when the addon loads and NVRTC was found. */
  static available(): boolean {
    return probe().nvrtc;
  }

  /** Throws `CompilerUnavailableError` with the loader's reason when NVRTC is missing. */
  constructor(options: NvrtcOptions = {}) {
    super(options);
    const p = probe();
    if (!p.nvrtc) throw new CompilerUnavailableError('NVRTC', p.nvrtcReason ?? p.reason ?? 'not found');
    this.includeDirs = options.includeDirs ?? defaultIncludeDirs();
  }

  version(): Promise<string> {
    const info = loadAddon().nvrtcInfo();
    return Promise.resolve(`nvrtc ${info.major}.${info.minor}`);
  }

  protected effectiveFlags(flags: readonly string[]): Promise<readonly string[]> {
    rejectFlags(flags, FORBIDDEN);
    return Promise.resolve([PTXAS_VERBOSE, ...this.includeDirs.map((d) => `--include-path=${d}`), ...flags]);
  }

  protected async run(_dir: string, source: string, arch: CudaArch, flags: readonly string[]): Promise<CompilerRun> {
    const native = loadAddon();
    const options = [`--gpu-architecture=${arch}`, ...flags];
    let out = await native.nvrtcCompile(source, ENTRY_FILES.source, options);
    if (!out.ok && out.result === NVRTC_ERROR_INVALID_OPTION && options.includes(PTXAS_VERBOSE)) {
      out = await native.nvrtcCompile(
        source,
        ENTRY_FILES.source,
        options.filter((o) => o !== PTXAS_VERBOSE),
      );
    }
    const log = `$ nvrtc ${options.join(' ')}\n${out.log}`;
    if (!out.ok) {
      return { ok: false, log, ...(out.result !== 6 ? { reason: `${out.stage}: ${out.resultName}` } : {}) };
    }
    return { ok: true, log, ...(out.cubin ? { cubin: out.cubin } : {}), ...(out.ptx !== undefined ? { ptx: out.ptx } : {}) };
  }
}
