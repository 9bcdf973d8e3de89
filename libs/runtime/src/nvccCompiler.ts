import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { TilekitError } from '@tilekit/numeric';
import type { CudaArch } from './arch.ts';
import { CachingCompiler, rejectFlags, type CompilerOptions, type CompilerRun } from './compiler.ts';
import { ENTRY_FILES } from './kernelCache.ts';

/** No nvcc could be found; the message lists where it was looked for. */
export class CompilerUnavailableError extends TilekitError {
  constructor(compiler: string, reason: string) {
    super('runtime/compiler-unavailable', `${compiler} is not available: ${reason}`);
  }
}

export interface NvccOptions extends CompilerOptions {
  /** Path of nvcc (default: `$TILEKIT_NVCC`, `nvcc` on PATH, `$CUDA_HOME/bin`, /usr/local/cuda/bin). */
  readonly nvccPath?: string;
  /** Kill nvcc after this long (default 10 minutes). */
  readonly timeoutMs?: number;
}

/** Options always passed, before the caller's flags. */
export const NVCC_BASE_FLAGS = ['-Xptxas', '-v', '-O3'] as const;

const FORBIDDEN = [
  /^-arch(=|$)/,
  /^--gpu-architecture(=|$)/,
  /^-gencode(=|$)/,
  /^--generate-code(=|$)/,
  /^-code(=|$)/,
  /^--gpu-code(=|$)/,
  /^-o$/,
  /^--output-file(=|$)/,
  /^-(cubin|ptx|fatbin|c|E|M|lib|link|dlink|run)$/,
  /^--(cubin|ptx|fatbin|compile|preprocess|lib|link|device-link|run)$/,
];

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

interface ProcessOutput {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly output: string;
  readonly error?: Error;
}

function runProcess(command: string, args: readonly string[], cwd: string, timeoutMs: number): Promise<ProcessOutput> {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', (error) => resolvePromise({ code: null, signal: null, output: Buffer.concat(chunks).toString('utf8'), error }));
    child.on('close', (code, signal) => resolvePromise({ code, signal, output: Buffer.concat(chunks).toString('utf8') }));
  });
}

/**
 * Compiles with nvcc in a child process: `nvcc -cubin -arch=<arch> -Xptxas -v -O3 <flags> -o
 * kernel.cubin kernel.cu`, run inside the entry's staging directory. ptxas' `-v` report gives
 * registers, spills, stack frame and shared memory per entry function. Needs no GPU.
 */
export class NvccCompiler extends CachingCompiler {
  readonly kind = 'nvcc' as const;
  readonly nvccPath: string;
  readonly timeoutMs: number;
  #version: Promise<string> | undefined;

  /** Where nvcc is, or undefined: `$TILEKIT_NVCC`, PATH, `$CUDA_HOME`/`$CUDA_PATH`, /usr/local/cuda. */
  static locate(env: NodeJS.ProcessEnv = process.env): string | undefined {
    const candidates: string[] = [];
    if (env['TILEKIT_NVCC']) candidates.push(env['TILEKIT_NVCC']);
    for (const dir of (env['PATH'] ?? '').split(delimiter)) if (dir) candidates.push(join(dir, 'nvcc'));
    for (const home of [env['CUDA_HOME'], env['CUDA_PATH'], '/usr/local/cuda']) if (home) candidates.push(join(home, 'bin', 'nvcc'));
    return candidates.find(executable);
  }

  /** True when nvcc can be found. */
  static available(env: NodeJS.ProcessEnv = process.env): boolean {
    return NvccCompiler.locate(env) !== undefined;
  }

  /** Throws `CompilerUnavailableError` when no nvcc is found. */
  constructor(options: NvccOptions = {}) {
    super(options);
    const path = options.nvccPath ?? NvccCompiler.locate();
    if (path === undefined) {
      throw new CompilerUnavailableError('nvcc', 'not found in $TILEKIT_NVCC, PATH, $CUDA_HOME/bin or /usr/local/cuda/bin');
    }
    this.nvccPath = path;
    this.timeoutMs = options.timeoutMs ?? 600_000;
  }

  /** The `release …` and `Build …` lines of `nvcc --version`. */
  version(): Promise<string> {
    this.#version ??= runProcess(this.nvccPath, ['--version'], process.cwd(), 60_000).then((out) => {
      if (out.error || out.code !== 0) {
        throw new CompilerUnavailableError('nvcc', `${this.nvccPath} --version failed: ${out.error?.message ?? out.output}`);
      }
      const lines = out.output.split('\n').filter((l) => /release|Build/.test(l));
      return `nvcc ${(lines.length > 0 ? lines : [out.output]).map((l) => l.trim()).join(' | ')}`;
    });
    return this.#version;
  }

  protected effectiveFlags(flags: readonly string[]): Promise<readonly string[]> {
    rejectFlags(flags, FORBIDDEN);
    return Promise.resolve([...NVCC_BASE_FLAGS, ...flags]);
  }

  protected async run(dir: string, _source: string, arch: CudaArch, flags: readonly string[]): Promise<CompilerRun> {
    const args = ['-cubin', `-arch=${arch}`, ...flags, '-o', ENTRY_FILES.binary, ENTRY_FILES.source];
    const out = await runProcess(this.nvccPath, args, dir, this.timeoutMs);
    const command = `$ ${this.nvccPath} ${args.join(' ')}\n`;
    const log = `${command}${out.output}`;
    if (out.error) return { ok: false, log, reason: `could not run nvcc: ${out.error.message}` };
    if (out.signal) return { ok: false, log, reason: `nvcc was killed by ${out.signal} (timeout ${this.timeoutMs} ms?)` };
    if (out.code !== 0) return { ok: false, log };
    return { ok: true, log, cubin: new Uint8Array(await readFile(join(dir, ENTRY_FILES.binary))) };
  }
}
