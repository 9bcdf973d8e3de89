import { TilekitError } from '@tilekit/numeric';
import { firstError, parseDiagnostics, type CompileDiagnostic } from './compileDiagnostics.ts';

export interface CompileErrorDetails {
  readonly compiler: string;
  readonly name: string;
  readonly arch: string;
  /** The whole compiler output. */
  readonly log: string;
  /** Where the generated source was kept (always written before compiling). */
  readonly sourcePath: string;
  /** Set when the failure is not the compiler's (e.g. the entry point is missing). */
  readonly reason?: string;
  /** The source text, to quote the failing line. */
  readonly source?: string;
}

/**
 * A kernel failed to compile. Carries the full compiler `log`, the kept `sourcePath`, and the
 * parsed `diagnostics`; the message gives the first error as `<sourcePath>:<line>: error: ...`
 * with the offending source line, plus how many more errors there were.
 */
export class CompileError extends TilekitError {
  readonly compiler: string;
  readonly kernelName: string;
  readonly arch: string;
  readonly log: string;
  readonly sourcePath: string;
  readonly diagnostics: readonly CompileDiagnostic[];

  constructor(details: CompileErrorDetails) {
    const diagnostics = parseDiagnostics(details.log);
    const first = firstError(diagnostics);
    const errors = diagnostics.filter((d) => d.severity !== 'warning').length;
    const lines = [`${details.compiler} failed to compile kernel ${details.name} for ${details.arch}`];
    if (details.reason) lines[0] += `: ${details.reason}`;
    if (first) {
      const where = first.line !== undefined ? `${details.sourcePath}:${first.line}: ` : '';
      lines.push(`  ${where}${first.severity}: ${first.message}`);
      const quoted = first.line !== undefined ? details.source?.split('\n')[first.line - 1] : undefined;
      if (quoted !== undefined) lines.push(`  ${String(first.line).padStart(5)} | ${quoted.trimEnd()}`);
      if (errors > 1) lines.push(`  (+${errors - 1} more error${errors > 2 ? 's' : ''})`);
    } else if (!details.reason) {
      const tail = details.log.trim().split('\n').slice(-5).join('\n  ');
      lines.push(`  ${tail || '(the compiler printed nothing)'}`);
    }
    lines.push(`  source: ${details.sourcePath}`);
    super('runtime/compile', lines.join('\n'));
    this.compiler = details.compiler;
    this.kernelName = details.name;
    this.arch = details.arch;
    this.log = details.log;
    this.sourcePath = details.sourcePath;
    this.diagnostics = diagnostics;
  }
}
