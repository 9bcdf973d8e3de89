// A forward attention launch validated and packed once (geometry, arguments, TMA maps).
import type { PackedArguments } from '@tilekit/codegen';
import type { FmhaFwdLaunch } from '@tilekit/fmha';
import type { TiledTensorMapOptions } from '@tilekit/runtime';

/** A validated launch. */
export interface PreparedFmhaFwdLaunch {
  readonly launch: FmhaFwdLaunch;
  readonly args: PackedArguments;
  readonly maps: { readonly q: TiledTensorMapOptions; readonly k: TiledTensorMapOptions; readonly v: TiledTensorMapOptions };
}
