// Test-only helpers (may use node: built-ins; excluded from the pure-package lint rule).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CType } from '../cType.ts';
import type { Scalar } from '../evaluate.ts';
import type { FunctionDef } from '../function.ts';
import { host } from '../hostTarget.ts';
import { SourceBuilder } from '../sourceBuilder.ts';

/** The host C++ compiler: `$TILEKIT_CXX`, else `g++`. */
export function hostCompiler(): string {
  return process.env['TILEKIT_CXX'] ?? 'g++';
}

/** Is a program on PATH (or at this path) runnable with `--version`? */
export function toolAvailable(command: string): boolean {
  try {
    execFileSync(command, ['--version'], { stdio: 'ignore', timeout: 20_000 });
    return true;
  } catch {
    return false;
  }
}

/** A compiler (or the compiled program) failed: the message carries the log and the numbered source. */
export class HostProgramError extends Error {
  readonly log: string;
  readonly source: string;

  constructor(what: string, log: string, source: string) {
    const numbered = source
      .split('\n')
      .map((l, i) => `${String(i + 1).padStart(4)}| ${l}`)
      .join('\n');
    super(`${what}\n${log}\n--- source ---\n${numbered}`);
    this.name = 'HostProgramError';
    this.log = log;
    this.source = source;
  }
}

/** Options of `compileAndRunHost`. */
export interface HostRunOptions {
  /** Text fed to the program's standard input. */
  readonly stdin?: string;
  /** Compiler flags (default `-std=c++17 -O1 -Wall -Werror`). */
  readonly flags?: readonly string[];
  /** Program arguments. */
  readonly args?: readonly string[];
}

/**
 * Compile one C++ source with the host compiler into a temporary directory, run it once, and
 * return its standard output (the directory is removed afterwards). Throws `HostProgramError` with
 * the compiler log and the numbered source when compiling or running fails.
 */
export function compileAndRunHost(source: string, options: HostRunOptions = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'tilekit-host-'));
  try {
    const file = join(dir, 'main.cpp');
    const exe = join(dir, 'main');
    writeFileSync(file, source);
    const flags = options.flags ?? ['-std=c++17', '-O1', '-Wall', '-Werror'];
    const cc = spawnSync(hostCompiler(), [...flags, file, '-o', exe], { encoding: 'utf8', timeout: 120_000 });
    if (cc.status !== 0)
      throw new HostProgramError(`${hostCompiler()} failed (${cc.status ?? cc.signal})`, `${cc.stderr}${cc.error?.message ?? ''}`, source);
    const run = spawnSync(exe, [...(options.args ?? [])], {
      input: options.stdin ?? '',
      encoding: 'utf8',
      timeout: 120_000,
      maxBuffer: 256 * 1024 * 1024,
    });
    if (run.status !== 0) throw new HostProgramError(`program exited with ${run.status ?? run.signal}`, run.stderr, source);
    return run.stdout;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One call of a function in `runHostFunctions`. */
export interface HostCall {
  readonly fn: FunctionDef;
  readonly args: readonly Scalar[];
}

interface Io {
  readonly read: string;
  readonly format: string;
}

/** How a scalar crosses stdin/stdout exactly: integers in decimal, floats as their bit patterns. */
function ioOf(t: CType, what: string): Io {
  if (t.kind === 'int') return t.signed ? { read: 'long long', format: '%lld' } : { read: 'unsigned long long', format: '%llu' };
  if (t.kind === 'bool') return { read: 'int', format: '%d' };
  if (t.kind === 'float') return t.bits === 32 ? { read: 'unsigned int', format: '%u' } : { read: 'unsigned long long', format: '%llu' };
  throw new Error(`runHostFunctions: ${what} has type ${t.kind}; only integers, bool, float and double cross the harness`);
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);

function encodeArg(v: Scalar, t: CType): string {
  if (t.kind === 'bool') return v ? '1' : '0';
  if (t.kind === 'float') {
    if (t.bits === 32) {
      f32[0] = Number(v);
      return String(u32[0]);
    }
    f64[0] = Number(v);
    return String(u64[0]);
  }
  return String(v);
}

function decodeResult(text: string, t: CType): Scalar {
  if (t.kind === 'bool') return text === '1';
  if (t.kind === 'float') {
    if (t.bits === 32) {
      u32[0] = Number(text);
      return f32[0] as number;
    }
    u64[0] = BigInt(text);
    return f64[0] as number;
  }
  if (t.kind === 'int') return t.bits === 64 ? BigInt(text) : Number(text);
  throw new Error(`unexpected result type ${t.kind}`);
}

/** Host-compilable C++ reading one argument into `a<i>` of type `t`. */
function readArg(i: number, t: CType): string[] {
  const io = ioOf(t, `parameter ${i}`);
  const tmp = `r${i}`;
  const lines = [`${io.read} ${tmp} = 0;`, `if (std::scanf("${io.format}", &${tmp}) != 1) return 2;`];
  if (t.kind === 'float') lines.push(`${t.cpp} a${i};`, `std::memcpy(&a${i}, &${tmp}, sizeof a${i});`);
  else if (t.kind === 'bool') lines.push(`bool a${i} = ${tmp} != 0;`);
  else lines.push(`${(t as { cpp: string }).cpp} a${i} = static_cast<${(t as { cpp: string }).cpp}>(${tmp});`);
  return lines;
}

function writeResult(t: CType): string[] {
  const io = ioOf(t, 'the result');
  if (t.kind === 'float') {
    return [`${io.read} out = 0;`, 'std::memcpy(&out, &res, sizeof res);', `std::printf("${io.format}\\n", out);`];
  }
  if (t.kind === 'bool') return ['std::printf("%d\\n", res ? 1 : 0);'];
  return [`std::printf("${io.format}\\n", static_cast<${io.read}>(res));`];
}

/**
 * The differential-testing pattern: compile `functions` (host C++ built with codegen) together with a
 * small stdin-driven harness ONCE, run every call in ONE process, and return the results in call
 * order as `evaluate` would (8-32-bit integers and floats as number, 64-bit as bigint, bool as
 * boolean; floats cross as exact bit patterns). Parameters and results must be integers, bool,
 * float or double.
 *
 * ```ts
 * const got = runHostFunctions([f], cases.map((args) => ({ fn: f, args })));
 * expect(got).toEqual(cases.map((c) => evaluate(body, bind(c))));
 * ```
 */
export function runHostFunctions(
  functions: readonly FunctionDef[],
  calls: readonly HostCall[],
  options: Pick<HostRunOptions, 'flags'> = {},
): Scalar[] {
  const src = new SourceBuilder({ dialect: host, header: 'tilekit codegen: host differential-test harness' });
  src.include('<cstdio>').include('<cstring>');
  functions.forEach((f) => src.add(f));
  const ids = new Map(functions.map((f, i) => [f, i]));
  const main = ['int main() {', '  int id = 0;', '  while (std::scanf("%d", &id) == 1) {', '    switch (id) {'];
  functions.forEach((f, id) => {
    if (f.body === null) throw new Error(`runHostFunctions: ${f.name} has no body`);
    const body = [
      ...f.params.flatMap((p, i) => readArg(i, p.type)),
      `const ${f.returnType.kind === 'bool' ? 'bool' : (f.returnType as { cpp: string }).cpp} res = ${f.name}(${f.params.map((_, i) => `a${i}`).join(', ')});`,
      ...writeResult(f.returnType),
      'break;',
    ];
    main.push(`      case ${id}: {`, ...body.map((l) => `        ${l}`), '      }');
  });
  main.push('      default:', '        return 3;', '    }', '  }', '  return 0;', '}');
  src.verbatim(main);
  const stdin = calls
    .map((c) => {
      const id = ids.get(c.fn);
      if (id === undefined) throw new Error(`runHostFunctions: ${c.fn.name} is not among the functions`);
      if (c.args.length !== c.fn.params.length) throw new Error(`runHostFunctions: ${c.fn.name} takes ${c.fn.params.length} arguments`);
      return [String(id), ...c.args.map((a, i) => encodeArg(a, (c.fn.params[i] as { type: CType }).type))].join(' ');
    })
    .join('\n');
  const out = compileAndRunHost(src.render(), { stdin: `${stdin}\n`, ...options });
  const lines = out.split('\n').filter((l) => l !== '');
  if (lines.length !== calls.length) throw new Error(`runHostFunctions: expected ${calls.length} results, got ${lines.length}`);
  return lines.map((l, i) => decodeResult(l, (calls[i] as HostCall).fn.returnType));
}
