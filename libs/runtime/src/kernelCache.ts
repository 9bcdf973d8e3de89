import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { KernelResources } from './ptxasInfo.ts';

/** Bumped whenever the entry layout or what the key covers changes. */
export const CACHE_FORMAT = 1;

/** Everything that changes the compiled binary. */
export interface CacheKeyParts {
  readonly compiler: string;
  /** The compiler's own version string (`nvcc --version`, NVRTC major.minor). */
  readonly compilerVersion: string;
  readonly arch: string;
  /** Every option passed to the compiler besides the arch, in order. */
  readonly flags: readonly string[];
  readonly source: string;
}

/**
 * sha256 (hex) of a canonical encoding of the parts. Postcondition (property-tested): equal parts
 * give equal keys, and changing any one part changes the key.
 */
export function cacheKey(parts: CacheKeyParts): string {
  const canonical = JSON.stringify([
    CACHE_FORMAT,
    parts.compiler,
    parts.compilerVersion,
    parts.arch,
    [...parts.flags],
    parts.source,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

/** `$TILEKIT_CACHE_DIR`, else `~/.cache/tilekit/kernels`. */
export function defaultCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env['TILEKIT_CACHE_DIR'];
  return dir ? dir : join(homedir(), '.cache', 'tilekit', 'kernels');
}

/** meta.json of an entry. */
export interface CacheEntryMeta {
  readonly format: number;
  readonly key: string;
  readonly compiler: string;
  readonly compilerVersion: string;
  readonly arch: string;
  readonly flags: readonly string[];
  /** Entry name given by the compile that created the entry. */
  readonly name: string;
  /** Resources of every entry function in the binary. */
  readonly functions: Readonly<Record<string, KernelResources>>;
  readonly resourcesReported: boolean;
  readonly cubinSha256: string;
  readonly cubinBytes: number;
  readonly hasPtx: boolean;
  readonly createdAt: string;
}

/** A complete, verified cache entry. */
export interface CacheEntry {
  readonly key: string;
  readonly dir: string;
  readonly sourcePath: string;
  readonly binaryPath: string;
  readonly ptxPath?: string;
  readonly logPath: string;
  readonly meta: CacheEntryMeta;
  readonly cubin: Uint8Array;
  readonly ptx?: string;
  readonly log: string;
}

/** File names inside an entry directory. */
export const ENTRY_FILES = {
  source: 'kernel.cu',
  binary: 'kernel.cubin',
  ptx: 'kernel.ptx',
  log: 'compile.log',
  meta: 'meta.json',
} as const;

export function sha256(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function isCode(error: unknown, ...codes: string[]): boolean {
  return typeof error === 'object' && error !== null && codes.includes((error as { code?: string }).code ?? '');
}

/**
 * The on-disk kernel cache: `<root>/<key[0:2]>/<key>/` holding the source, the cubin, the log and
 * meta.json. Entries are built in a private staging directory beside their final place and
 * published with one `rename`, so readers see a whole entry or none; when two writers race for
 * one key the first rename wins and the loser discards its copy. A reader treats an entry whose
 * cubin does not match meta.json's checksum as a miss, and the next publish replaces it.
 */
export class KernelCache {
  readonly root: string;

  constructor(root: string = defaultCacheDir()) {
    this.root = root;
  }

  entryDir(key: string): string {
    return join(this.root, key.slice(0, 2), key);
  }

  /** The verified entry for `key`, or undefined (missing, partial, or corrupt). */
  async lookup(key: string): Promise<CacheEntry | undefined> {
    return readEntry(this.entryDir(key), key);
  }

  /** A fresh private directory on the same filesystem as the entry, for building it. */
  async stage(key: string): Promise<string> {
    const parent = join(this.root, key.slice(0, 2));
    await mkdir(parent, { recursive: true });
    return mkdtemp(join(parent, `.staging-${key.slice(0, 12)}-`));
  }

  /**
   * Moves a complete staging directory into place. Returns the entry now published for `key`:
   * ours, or a concurrent writer's if it got there first. A corrupt existing entry is replaced.
   */
  async publish(key: string, staging: string): Promise<CacheEntry> {
    const dir = this.entryDir(key);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        await rename(staging, dir);
        const entry = await readEntry(dir, key);
        if (entry) return entry;
      } catch (error) {
        if (!isCode(error, 'ENOTEMPTY', 'EEXIST', 'EISDIR')) throw error;
        const existing = await readEntry(dir, key);
        if (existing) {
          await rm(staging, { recursive: true, force: true });
          return existing;
        }
        // Corrupt or half-deleted: move it aside (atomic) and retry.
        const aside = `${dir}.corrupt-${process.pid}-${Date.now()}`;
        await rename(dir, aside).then(
          () => rm(aside, { recursive: true, force: true }),
          () => undefined,
        );
      }
    }
    throw new Error(`tilekit kernel cache: could not publish ${key} under ${this.root}`);
  }

  /**
   * Keeps a failed compile's staging directory (source and log) as `<root>/failed/<key>/`,
   * replacing an older failure of the same key. Returns the directory now holding it.
   */
  async keepFailure(key: string, staging: string): Promise<string> {
    const failed = join(this.root, 'failed');
    await mkdir(failed, { recursive: true });
    const dir = join(failed, key);
    await rm(dir, { recursive: true, force: true });
    try {
      await rename(staging, dir);
      return dir;
    } catch {
      return staging; // a concurrent failure took the name; ours stays where it is
    }
  }
}

async function readEntry(dir: string, key: string): Promise<CacheEntry | undefined> {
  let meta: CacheEntryMeta;
  try {
    meta = JSON.parse(await readFile(join(dir, ENTRY_FILES.meta), 'utf8')) as CacheEntryMeta;
  } catch {
    return undefined;
  }
  if (meta.format !== CACHE_FORMAT || meta.key !== key) return undefined;
  try {
    const binaryPath = join(dir, ENTRY_FILES.binary);
    const cubin = new Uint8Array(await readFile(binaryPath));
    if (cubin.length !== meta.cubinBytes || sha256(cubin) !== meta.cubinSha256) return undefined;
    const sourcePath = join(dir, ENTRY_FILES.source);
    const logPath = join(dir, ENTRY_FILES.log);
    const log = await readFile(logPath, 'utf8');
    await readFile(sourcePath, { encoding: 'utf8', flag: 'r' });
    const base = { key, dir, sourcePath, binaryPath, logPath, meta, cubin, log };
    if (!meta.hasPtx) return base;
    const ptxPath = join(dir, ENTRY_FILES.ptx);
    return { ...base, ptxPath, ptx: await readFile(ptxPath, 'utf8') };
  } catch {
    return undefined;
  }
}
