// Types for sanitizeReport.mjs (used by the unit tests in src/).

export interface SanitizerSummary {
  readonly errors?: number;
  readonly hazards?: number;
  readonly raceErrors?: number;
  readonly raceWarnings?: number;
  readonly notPrinted?: number;
}

export interface SanitizerReport {
  /** The report's first line (its kind: "Invalid __global__ read of size 4 bytes", a hazard, an API error). */
  readonly kind: string;
  /** The kernel it is about; null for host-side reports. */
  readonly kernel: string | null;
  /** Its first lines. */
  readonly text: string;
}

export interface SanitizerOutput {
  readonly complete: boolean;
  readonly findings: number;
  readonly summary: SanitizerSummary | null;
  readonly reports: readonly SanitizerReport[];
  readonly notes: readonly string[];
  readonly exitedWithError: boolean;
}

export interface TapTest {
  readonly name: string;
  readonly status: 'passed' | 'failed' | 'skipped' | 'todo' | 'unmatched';
  readonly reason: string;
}

export interface TestCounts {
  readonly matched: number;
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
  readonly failedTests: readonly string[];
}

export interface FamilyResult {
  readonly status: 'clean' | 'findings' | 'incomplete';
  readonly kernels: readonly string[];
  readonly launches: number;
  readonly launchesByKernel: Readonly<Record<string, number>>;
  readonly findings: number;
  readonly findingsByKernel: Readonly<Record<string, number>>;
  readonly sample: readonly SanitizerReport[];
  readonly summary: SanitizerSummary | null;
  readonly notes: readonly string[];
  readonly tests: TestCounts;
  readonly problems: readonly string[];
  readonly seconds: number;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly log: string;
}

export declare function sanitizerLines(text: string): string[];
export declare function kernelOf(block: readonly string[]): string | null;
export declare function parseSanitizerOutput(text: string): SanitizerOutput;
export declare function findingsByKernel(reports: readonly SanitizerReport[]): Record<string, number>;
export declare function parseTapTests(text: string): TapTest[];
export declare function testCounts(tests: readonly TapTest[]): TestCounts;
export declare function summarizeLaunchLog(text: string): { launches: number; kernels: Record<string, number> };
export declare function familyResult(run: {
  readonly output: string;
  readonly launchLog: string;
  readonly seconds: number;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly log: string;
}): FamilyResult;
