/** One message from a compiler log. `file`/`line` are absent for tool-level messages (ptxas, nvcc fatal). */
export interface CompileDiagnostic {
  readonly severity: 'error' | 'warning' | 'fatal';
  readonly message: string;
  readonly file?: string;
  readonly line?: number;
  /** The log line it came from. */
  readonly text: string;
}

// EDG front end (nvcc and NVRTC): `kernel.cu(12): error: expected a ";"` or `... warning #177-D: ...`.
const FRONT_END = /^(.*?)\((\d+)\): (error|warning|catastrophic error)(?: #[\w-]+)?: (.*)$/;
// Host compiler / preprocessor style: `kernel.cu:12:5: error: ...`.
const GCC_STYLE = /^(.*?):(\d+):(?:\d+:)? (error|fatal error|warning): (.*)$/;
// Tools: `ptxas error   : ...`, `ptxas fatal   : ...`, `nvcc fatal   : ...`, `nvlink error : ...`.
const TOOL = /^(ptxas|nvcc|nvlink|fatbinary)\s+(error|fatal|warning)\s*: (.*)$/;

/**
 * Extracts errors and warnings from an nvcc or NVRTC log, in log order. Postcondition (tested on
 * real nvcc output): every `file(line): error:` line yields an error with that file and line.
 */
export function parseDiagnostics(log: string): CompileDiagnostic[] {
  const out: CompileDiagnostic[] = [];
  for (const raw of log.split(/\r?\n/)) {
    const text = raw.trimEnd();
    let m = FRONT_END.exec(text);
    if (m) {
      const severity = m[3] === 'warning' ? 'warning' : m[3] === 'error' ? 'error' : 'fatal';
      out.push({ severity, message: m[4]!, file: m[1]!, line: Number(m[2]), text });
      continue;
    }
    m = GCC_STYLE.exec(text);
    if (m) {
      const severity = m[3] === 'warning' ? 'warning' : m[3] === 'error' ? 'error' : 'fatal';
      out.push({ severity, message: m[4]!, file: m[1]!, line: Number(m[2]), text });
      continue;
    }
    m = TOOL.exec(text);
    if (m) {
      const severity = m[2] === 'warning' ? 'warning' : m[2] === 'error' ? 'error' : 'fatal';
      out.push({ severity, message: `${m[1]}: ${m[3]!}`, text });
    }
  }
  return out;
}

/** The first error (or fatal) diagnostic, if any. */
export function firstError(diagnostics: readonly CompileDiagnostic[]): CompileDiagnostic | undefined {
  return diagnostics.find((d) => d.severity !== 'warning');
}
