// Every target by name.
import { ArgumentError } from '@tilekit/numeric';
import { sm80, sm90a } from './cudaTarget.ts';
import { gfx942 } from './hipTarget.ts';
import { host } from './hostTarget.ts';
import type { Target, TargetName } from './target.ts';

/** Every target by name. */
export const targets: Readonly<Record<TargetName, Target>> = Object.freeze({ host, sm_80: sm80, sm_90a: sm90a, gfx942 });

/** The target named `name`; throws `ArgumentError` listing the known names. */
export function getTarget(name: string): Target {
  if (!Object.hasOwn(targets, name)) throw new ArgumentError('target', `must be one of ${Object.keys(targets).join(', ')}`, name);
  return targets[name as TargetName];
}
