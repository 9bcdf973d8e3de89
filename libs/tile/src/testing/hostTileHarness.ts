// Test-only: runs host-dialect tile functions (pointer + int parameters) with g++ in one process.
import { host, SourceBuilder, type FunctionDef } from '@tilekit/codegen';
import { compileAndRunHost } from '@tilekit/codegen/testing';

/** One call: the initial contents of each pointer parameter (in order), then the int arguments. */
export interface HostTileCall {
  readonly fn: FunctionDef;
  readonly arrays: readonly (readonly number[])[];
  readonly ints?: readonly number[];
}

const g = (x: number): string => (Number.isInteger(x) ? String(x) : String(Math.fround(x)));

/**
 * Compiles `functions` with a main that runs every call on fresh arrays and prints the arrays
 * afterwards; returns, per call, the final contents of its arrays. Element types: float, double,
 * int (as the pointee of each pointer parameter).
 */
export function runHostTileCalls(
  functions: readonly FunctionDef[],
  calls: readonly HostTileCall[],
  flags?: readonly string[],
): number[][][] {
  const src = new SourceBuilder({ dialect: host, header: 'tilekit tile: host-dialect test harness' });
  src.include('<cstdio>');
  functions.forEach((f) => src.add(f));
  const main: string[] = ['int main() {'];
  calls.forEach((c, k) => {
    const ptrs = c.fn.params.filter((p) => p.type.kind === 'pointer');
    if (ptrs.length !== c.arrays.length) throw new Error(`${c.fn.name}: ${ptrs.length} pointer parameters, ${c.arrays.length} arrays`);
    main.push('  {');
    const args: string[] = [];
    let a = 0;
    let i = 0;
    for (const p of c.fn.params) {
      if (p.type.kind === 'pointer') {
        const el = p.type.pointee.kind === 'float' || p.type.pointee.kind === 'int' ? p.type.pointee.cpp : 'float';
        const data = c.arrays[a]!;
        main.push(`    static ${el} a${k}_${a}[${Math.max(1, data.length)}] = {${data.map(g).join(', ')}};`);
        args.push(`a${k}_${a}`);
        a++;
      } else {
        args.push(String(c.ints?.[i++] ?? 0));
      }
    }
    main.push(`    ${c.fn.name}(${args.join(', ')});`);
    c.arrays.forEach((data, j) => {
      const p = ptrs[j]!;
      const isInt = p.type.kind === 'pointer' && p.type.pointee.kind === 'int';
      main.push(
        `    for (int i = 0; i < ${data.length}; ++i) std::printf("${isInt ? '%d ' : '%.9g '}", a${k}_${j}[i]);`,
        '    std::printf("\\n");',
      );
    });
    main.push('  }');
  });
  main.push('  return 0;', '}');
  src.verbatim(main);
  const out = compileAndRunHost(src.render(), {
    flags: flags ?? ['-std=c++17', '-O1', '-Wall', '-Werror', '-Wno-unused-variable', '-Wno-unused-but-set-variable'],
  });
  const lines = out.split('\n');
  const res: number[][][] = [];
  let line = 0;
  for (const c of calls) {
    res.push(
      c.arrays.map(() =>
        (lines[line++] ?? '')
          .trim()
          .split(/\s+/)
          .filter((s) => s !== '')
          .map(Number),
      ),
    );
  }
  return res;
}
