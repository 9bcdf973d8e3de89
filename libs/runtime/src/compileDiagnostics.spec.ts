import { describe, expect, it } from 'vitest';
import { firstError, parseDiagnostics } from './compileDiagnostics.ts';

// nvcc 13.0 on a missing semicolon (the same front end as NVRTC).
const NVCC_SYNTAX = `kernel.cu(3): error: expected a ";"
    p[0] = x;
    ^

kernel.cu(2): warning #177-D: variable "x" was declared but never referenced
    int x = 1
        ^

Remark: The warnings can be suppressed with "-diag-suppress <warning-number>"

1 error detected in the compilation of "kernel.cu".
`;

describe('parseDiagnostics', () => {
  it('reads file, line and severity from front-end messages', () => {
    const diagnostics = parseDiagnostics(NVCC_SYNTAX);
    expect(diagnostics).toEqual([
      { severity: 'error', message: 'expected a ";"', file: 'kernel.cu', line: 3, text: 'kernel.cu(3): error: expected a ";"' },
      {
        severity: 'warning',
        message: 'variable "x" was declared but never referenced',
        file: 'kernel.cu',
        line: 2,
        text: 'kernel.cu(2): warning #177-D: variable "x" was declared but never referenced',
      },
    ]);
    expect(firstError(diagnostics)?.line).toBe(3);
  });

  it('reads tool messages without a location, and gcc-style locations', () => {
    const diagnostics = parseDiagnostics(
      [
        "ptxas error   : Entry function 'big' uses too much shared data (0x10000 bytes, 0xc000 max)",
        "nvcc fatal   : Unsupported gpu architecture 'compute_99'",
        'kernel.cu:7:12: fatal error: missing.h: No such file or directory',
        'kernel.cu(9): catastrophic error: cannot open source file "missing.h"',
      ].join('\n'),
    );
    expect(diagnostics.map((d) => [d.severity, d.line, d.message])).toEqual([
      ['error', undefined, "ptxas: Entry function 'big' uses too much shared data (0x10000 bytes, 0xc000 max)"],
      ['fatal', undefined, "nvcc: Unsupported gpu architecture 'compute_99'"],
      ['fatal', 7, 'missing.h: No such file or directory'],
      ['fatal', 9, 'cannot open source file "missing.h"'],
    ]);
  });

  it('finds nothing in a clean ptxas report', () => {
    expect(parseDiagnostics('ptxas info    : Used 10 registers, used 0 barriers\n')).toEqual([]);
    expect(firstError([])).toBeUndefined();
  });
});
