// Types for the values eslint.config.mjs exports beside its default, used by the workspace tests.
import type { Linter } from 'eslint';

export type LayerRule =
  | { readonly sourceTag: string; readonly onlyDependOnLibsWithTags: readonly string[] }
  | { readonly sourceTag: string; readonly notDependOnLibsWithTags: readonly string[] };
export declare const layerRules: readonly LayerRule[];
export declare const purePackageGlobs: readonly string[];
declare const config: Linter.Config[];
export default config;
