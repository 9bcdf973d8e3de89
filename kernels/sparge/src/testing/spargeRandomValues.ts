import { Prng } from '@tilekit/host';

/** `count` values uniform in [−amplitude, amplitude) from a seed (reproducible test inputs). */
export function spargeRandomValues(count: number, seed: number, amplitude = 1): Float64Array {
  const rng = new Prng(seed);
  const out = new Float64Array(count);
  for (let i = 0; i < count; i++) out[i] = rng.nextRange(-amplitude, amplitude);
  return out;
}
