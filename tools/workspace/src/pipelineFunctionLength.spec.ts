// The attention pipelines stay compositions of short steps (issue 18): no function, method or
// arrow function in libs/fmha/src/pipeline (specs aside) spans more than 80 lines.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { workspaceRoot } from './workspaceProjects.ts';

const PIPELINE_DIR = 'libs/fmha/src/pipeline';
const MAX_LINES = 80;

/** `file:line (n lines)` of every function-like node of `text` longer than `max` lines. */
export function longFunctions(file: string, text: string, max: number): string[] {
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isFunctionLike(n) && 'body' in n && n.body !== undefined) {
      const first = src.getLineAndCharacterOfPosition(n.getStart(src)).line;
      const lines = src.getLineAndCharacterOfPosition(n.getEnd()).line - first + 1;
      if (lines > max) found.push(`${file}:${first + 1} (${lines} lines)`);
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
  return found;
}

describe('libs/fmha/src/pipeline: functions are short steps', () => {
  it('finds a long function (the check can fail)', () => {
    const body = Array.from({ length: MAX_LINES }, (_, i) => `  const x${i} = ${i};`).join('\n');
    expect(longFunctions('probe.ts', `function long() {\n${body}\n}\n`, MAX_LINES)).toEqual(['probe.ts:1 (82 lines)']);
    expect(longFunctions('probe.ts', 'const f = () => 1;\n', MAX_LINES)).toEqual([]);
  });

  it(`no function in ${PIPELINE_DIR} is longer than ${MAX_LINES} lines`, () => {
    const dir = join(workspaceRoot, PIPELINE_DIR);
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'));
    expect(files.length).toBeGreaterThan(10);
    expect(files.flatMap((f) => longFunctions(`${PIPELINE_DIR}/${f}`, readFileSync(join(dir, f), 'utf8'), MAX_LINES))).toEqual([]);
  });
});
