import { execFileSync, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { roundTripTable, validateRoundTrip } from './dtypeRoundTrip.ts';

describe('round-trip table', () => {
  it('shows the spec bit patterns of 1.0', () => {
    const [row] = roundTripTable([1], ['fp16', 'bf16', 'fp8e4m3fn', 'fp8e4m3fnuz']);
    expect(row?.cells.get('fp16')).toEqual({ bits: '0x3c00', value: 1 });
    expect(row?.cells.get('bf16')).toEqual({ bits: '0x3f80', value: 1 });
    expect(row?.cells.get('fp8e4m3fn')).toEqual({ bits: '0x38', value: 1 });
    expect(row?.cells.get('fp8e4m3fnuz')).toEqual({ bits: '0x40', value: 1 });
  });

  it('validation passes for in-range values and flags nothing for out-of-range ones', () => {
    for (const x of [0.1, -3.75, 100.3, 1e-6]) {
      for (const name of ['fp16', 'bf16', 'fp8e4m3fn', 'fp8e5m2'] as const) expect(validateRoundTrip(name, x)).toBeUndefined();
    }
    expect(validateRoundTrip('fp8e4m3fn', 1e6)).toBeUndefined();
  });
});

describe('example_dtypes executable', () => {
  const root = resolve(import.meta.dirname, '../../..');
  const run = (args: string[]) =>
    spawnSync(resolve(root, 'node_modules/.bin/tsx'), ['--conditions=@tilekit/source', 'examples/dtypes/src/main.ts', ...args], {
      cwd: root,
      encoding: 'utf8',
    });

  it('prints the table and validates', () => {
    const out = execFileSync(
      resolve(root, 'node_modules/.bin/tsx'),
      ['--conditions=@tilekit/source', 'examples/dtypes/src/main.ts', '-n=3'],
      {
        cwd: root,
        encoding: 'utf8',
      },
    );
    expect(out).toContain('fp8e5m2fnuz');
    expect(out).toContain('valid: yes (33 round trips)');
  });

  it('rejects a bad flag with a one-line error naming it, exit 2', () => {
    const result = run(['-n=abc']);
    expect(result.status).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual(['error: -n=abc: expected an integer']);
  });

  it('-? lists every flag with its default', () => {
    const result = run(['-?']);
    expect(result.status).toBe(0);
    for (const flag of ['-n', '-init', '-seed', '-dtypes', '-v']) expect(result.stdout).toContain(flag);
    expect(result.stdout).toContain('uf:-500,500');
  });
});
