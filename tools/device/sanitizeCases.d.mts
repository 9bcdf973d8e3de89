// Types for sanitizeCases.mjs (used by the unit tests in src/).

/** A test's exact name, or every test whose name starts with `prefix`. */
export type SanitizeSelector = string | { readonly prefix: string };

export interface SanitizeFamily {
  readonly family: string;
  /** What the family's cases exercise. */
  readonly covers: string;
  /** Bundle file name (in .device/gpu-tests) → the tests it runs. */
  readonly bundles: Readonly<Record<string, readonly SanitizeSelector[]>>;
}

export declare const SANITIZER_TOOLS: Readonly<Record<'memcheck' | 'racecheck' | 'synccheck' | 'initcheck', readonly string[]>>;
export declare const SANITIZE_PLAN: readonly SanitizeFamily[];
export declare function selectorPattern(selector: SanitizeSelector): string;
export declare function selectorLabel(selector: SanitizeSelector): string;
export declare function selectorMatches(selector: SanitizeSelector, name: string): boolean;
export declare function familySelectors(entry: SanitizeFamily): { bundle: string; selector: SanitizeSelector }[];
export declare function planFamily(name: string): SanitizeFamily | undefined;
