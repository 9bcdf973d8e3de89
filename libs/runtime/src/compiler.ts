import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArgumentError } from '@tilekit/numeric';
import { parseArch, type CudaArch } from './arch.ts';
import { CompileError } from './compileError.ts';
import { Device } from './device.ts';
import { cacheKey, ENTRY_FILES, KernelCache, sha256, type CacheEntry, type CacheEntryMeta } from './kernelCache.ts';
import { NO_RESOURCES, parsePtxasInfo, type KernelResources } from './ptxasInfo.ts';

export type CompilerKind = 'nvcc' | 'nvrtc';

/** One kernel source to compile. */
export interface CompileRequest {
  /** Complete CUDA C++ translation unit. */
  readonly source: string;
  /** The `extern "C" __global__` entry point the caller will launch. */
  readonly name: string;
  /** Target arch, or a device whose arch to use; default: device 0's arch. */
  readonly arch?: CudaArch | { readonly arch: CudaArch };
  /** Extra compiler options (no arch or output options: the compiler sets those). */
  readonly flags?: readonly string[];
}

/** A compiled kernel and where its files are. */
export interface CompileResult {
  readonly cubin: Uint8Array;
  readonly ptx?: string;
  readonly log: string;
  /** The resources of `name` (all zeros when `resourcesReported` is false). */
  readonly resources: KernelResources;
  /** The resources of every entry function in the binary. */
  readonly functions: Readonly<Record<string, KernelResources>>;
  /** False when the compiler printed no ptxas report. */
  readonly resourcesReported: boolean;
  /** True when the result came from the on-disk cache. */
  readonly cached: boolean;
  readonly sourcePath: string;
  readonly binaryPath: string;
  readonly key: string;
  readonly arch: CudaArch;
  readonly compiler: CompilerKind;
  readonly compilerVersion: string;
}

/** The interface both compilers implement. */
export interface Compiler {
  readonly kind: CompilerKind;
  /** The compiler's identity, part of every cache key. */
  version(): Promise<string>;
  /** Compiles (or fetches from the cache); throws `CompileError` with the log and source path. */
  compile(request: CompileRequest): Promise<CompileResult>;
}

export interface CompilerOptions {
  /** Cache root (default `$TILEKIT_CACHE_DIR` or `~/.cache/tilekit/kernels`). */
  readonly cacheDir?: string;
  /** false: always compile, into a temporary directory, and publish nothing (default true). */
  readonly useCache?: boolean;
}

/** What a concrete compiler returns for one run in a staging directory. */
export interface CompilerRun {
  readonly ok: boolean;
  readonly log: string;
  readonly cubin?: Uint8Array;
  readonly ptx?: string;
  /** Why `ok` is false when the log alone does not say. */
  readonly reason?: string;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The shared compile flow: validate → key → cache lookup → write the source into a staging
 * directory → run the compiler there → parse ptxas resources → write the cubin and meta.json →
 * publish atomically. Concurrent compiles of one key inside one compiler share a single run.
 * A failure keeps the source and log under `<cache>/failed/<key>/` and throws `CompileError`.
 */
export abstract class CachingCompiler implements Compiler {
  abstract readonly kind: CompilerKind;
  readonly cache: KernelCache;
  readonly useCache: boolean;
  readonly #inflight = new Map<string, Promise<{ entry: CacheEntry; cached: boolean }>>();

  constructor(options: CompilerOptions = {}) {
    this.cache = new KernelCache(options.cacheDir);
    this.useCache = options.useCache ?? true;
  }

  abstract version(): Promise<string>;

  /** Rejects flags this compiler sets itself; returns the full option list hashed into the key. */
  protected abstract effectiveFlags(flags: readonly string[]): Promise<readonly string[]>;

  /** Runs the compiler on `dir/kernel.cu`. */
  protected abstract run(dir: string, source: string, arch: CudaArch, flags: readonly string[]): Promise<CompilerRun>;

  async compile(request: CompileRequest): Promise<CompileResult> {
    const { source, name, arch, flags } = this.#check(request);
    const effective = await this.effectiveFlags(flags);
    const compilerVersion = await this.version();
    const key = cacheKey({ compiler: this.kind, compilerVersion, arch, flags: effective, source });
    let job = this.#inflight.get(key);
    if (job === undefined) {
      job = this.#compileKey(key, source, name, arch, effective, compilerVersion);
      this.#inflight.set(key, job);
      void job.then(
        () => this.#inflight.delete(key),
        () => this.#inflight.delete(key),
      );
    }
    const { entry, cached } = await job;
    return this.#result(entry, name, cached, arch, source);
  }

  async #compileKey(
    key: string,
    source: string,
    name: string,
    arch: CudaArch,
    flags: readonly string[],
    compilerVersion: string,
  ): Promise<{ entry: CacheEntry; cached: boolean }> {
    if (this.useCache) {
      const hit = await this.cache.lookup(key);
      if (hit) return { entry: hit, cached: true };
    }
    const staging = this.useCache ? await this.cache.stage(key) : await mkdtemp(join(tmpdir(), 'tilekit-compile-'));
    await writeFile(join(staging, ENTRY_FILES.source), source);
    const run = await this.run(staging, source, arch, flags);
    await writeFile(join(staging, ENTRY_FILES.log), run.log);
    const reason = run.ok && !run.cubin ? 'the compiler produced no cubin' : run.reason;
    if (!run.ok || !run.cubin || reason !== undefined) {
      const dir = this.useCache ? await this.cache.keepFailure(key, staging) : staging;
      throw new CompileError({
        compiler: this.kind,
        name,
        arch,
        log: run.log,
        sourcePath: join(dir, ENTRY_FILES.source),
        source,
        ...(reason !== undefined ? { reason } : {}),
      });
    }
    const functions = parsePtxasInfo(run.log);
    await writeFile(join(staging, ENTRY_FILES.binary), run.cubin);
    if (run.ptx !== undefined) await writeFile(join(staging, ENTRY_FILES.ptx), run.ptx);
    const meta: CacheEntryMeta = {
      format: 1,
      key,
      compiler: this.kind,
      compilerVersion,
      arch,
      flags,
      name,
      functions: Object.fromEntries(functions),
      resourcesReported: functions.size > 0,
      cubinSha256: sha256(run.cubin),
      cubinBytes: run.cubin.length,
      hasPtx: run.ptx !== undefined,
      createdAt: new Date().toISOString(),
    };
    await writeFile(join(staging, ENTRY_FILES.meta), `${JSON.stringify(meta, null, 2)}\n`);
    if (!this.useCache) {
      const entry: CacheEntry = {
        key,
        dir: staging,
        sourcePath: join(staging, ENTRY_FILES.source),
        binaryPath: join(staging, ENTRY_FILES.binary),
        logPath: join(staging, ENTRY_FILES.log),
        meta,
        cubin: run.cubin,
        log: run.log,
        ...(run.ptx !== undefined ? { ptx: run.ptx, ptxPath: join(staging, ENTRY_FILES.ptx) } : {}),
      };
      return { entry, cached: false };
    }
    return { entry: await this.cache.publish(key, staging), cached: false };
  }

  // Builds the result for `name`, which must be one of the binary's entry points when ptxas
  // listed them (a misspelt or mangled name fails here, not at launch).
  #result(entry: CacheEntry, name: string, cached: boolean, arch: CudaArch, source: string): CompileResult {
    const reported = entry.meta.resourcesReported;
    const functions = entry.meta.functions;
    if (reported && !Object.hasOwn(functions, name)) {
      throw new CompileError({
        compiler: this.kind,
        name,
        arch,
        log: entry.log,
        sourcePath: entry.sourcePath,
        source,
        reason: `no entry function named ${name} (entries: ${Object.keys(functions).join(', ')}); declare it extern "C" __global__`,
      });
    }
    return {
      cubin: entry.cubin,
      ...(entry.ptx !== undefined ? { ptx: entry.ptx } : {}),
      log: entry.log,
      resources: reported ? functions[name]! : NO_RESOURCES,
      functions,
      resourcesReported: reported,
      cached,
      sourcePath: entry.sourcePath,
      binaryPath: entry.binaryPath,
      key: entry.key,
      arch,
      compiler: this.kind,
      compilerVersion: entry.meta.compilerVersion,
    };
  }

  #check(request: CompileRequest): { source: string; name: string; arch: CudaArch; flags: readonly string[] } {
    if (typeof request !== 'object' || request === null) throw new ArgumentError('request', 'must be an object', request);
    const { source, name } = request;
    if (typeof source !== 'string' || source.trim() === '') throw new ArgumentError('source', 'must be a non-empty string');
    if (typeof name !== 'string' || !NAME.test(name)) {
      throw new ArgumentError('name', 'must be a C identifier (the extern "C" entry point)', name);
    }
    const flags = request.flags ?? [];
    if (!Array.isArray(flags) || flags.some((f) => typeof f !== 'string' || f === '')) {
      throw new ArgumentError('flags', 'must be an array of non-empty strings', flags);
    }
    return { source, name, arch: resolveArch(request.arch), flags };
  }
}

/** The request's arch, a device's arch, or device 0's; `ArgumentError` when none can be known. */
export function resolveArch(arch: CompileRequest['arch']): CudaArch {
  if (typeof arch === 'string') {
    parseArch(arch);
    return arch;
  }
  if (arch !== undefined) {
    if (typeof arch !== 'object' || arch === null || typeof arch.arch !== 'string') {
      throw new ArgumentError('arch', 'must be an arch name such as sm_90a or a Device', arch);
    }
    parseArch(arch.arch);
    return arch.arch;
  }
  if (Device.count() === 0) throw new ArgumentError('arch', 'must be given when no CUDA device is present');
  return Device.open(0).arch;
}

/**
 * Rejects options that would fight the compiler's own (`-arch`, `-o`, output kinds), naming the
 * offending flag.
 */
export function rejectFlags(flags: readonly string[], forbidden: readonly RegExp[]): void {
  for (const flag of flags) {
    if (forbidden.some((pattern) => pattern.test(flag))) {
      throw new ArgumentError('flags', 'must not set the architecture, output file or output kind (the compiler does)', flag);
    }
  }
}
