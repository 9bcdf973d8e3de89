import { ArgumentError } from '@tilekit/numeric';
import { isIdentifier } from '../expr.ts';
import { sha256Hex } from './sha256.ts';

/** A value of an instance configuration: JSON-like data, no functions, no undefined. */
export type InstanceValue = string | number | boolean | readonly InstanceValue[] | { readonly [key: string]: InstanceValue };

/** A kernel instance's full configuration (Problem traits and Policy choices), as plain data. */
export type InstanceConfig = Readonly<Record<string, InstanceValue>>;

/** Options of `instanceKey`. */
export interface InstanceKeyOptions {
  /**
   * How each config key appears in the name: `tags.vectorBytes = 'v'` gives `v16`; `''` gives the
   * value alone (`fp16`); a key without a tag is left out of the name (it still enters the hash).
   * Name parts follow the order of `tags`.
   */
  readonly tags?: Readonly<Record<string, string>>;
}

/**
 * A kernel instance's identity: `name` is a C identifier (it doubles as the `extern "C"` entry
 * point), built from the family and the tagged config values; `hash` is the first 16 hex digits
 * of the SHA-256 of the canonical JSON of `{ family, config }` (keys sorted at every level), so it
 * changes with any part of the configuration, including parts the name leaves out.
 */
export interface InstanceKey {
  readonly family: string;
  readonly config: InstanceConfig;
  readonly name: string;
  readonly hash: string;
  /** The canonical JSON the hash is taken of. */
  readonly canonical: string;
}

/**
 * Canonical JSON of an instance value: object keys sorted, no whitespace, integers and finite
 * numbers as JSON prints them. Postcondition (tested): equal for configs that differ only in key
 * order; throws `ArgumentError` for undefined, functions, bigint, non-finite numbers.
 */
export function canonicalJson(value: InstanceValue, where = 'config'): string {
  if (typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new ArgumentError(where, 'must be a finite number', value);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v, i) => canonicalJson(v as InstanceValue, `${where}[${i}]`)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, InstanceValue>)[k]!, `${where}.${k}`)}`);
    return `{${entries.join(',')}}`;
  }
  throw new ArgumentError(where, 'must be a string, finite number, boolean, array or object', typeof value);
}

function namePart(value: InstanceValue, where: string): string {
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) return String(value).replace('.', 'p').replace('-', 'm');
    return value < 0 ? `m${-value}` : String(value);
  }
  if (typeof value === 'string') {
    if (!/^[A-Za-z0-9_]*$/.test(value)) throw new ArgumentError(where, 'a named config string must use only letters, digits and _', value);
    return value;
  }
  if (Array.isArray(value)) return value.map((v, i) => namePart(v as InstanceValue, `${where}[${i}]`)).join('x');
  throw new ArgumentError(where, 'a named config value must be a string, number, boolean or array of them', value);
}

/**
 * The deterministic key of a kernel instance: see `InstanceKey`. Postconditions (tested): the same
 * family and config (in any key order) give the same name and hash; configs that differ anywhere
 * give different hashes; the name is a C identifier.
 */
export function instanceKey(family: string, config: InstanceConfig, options: InstanceKeyOptions = {}): InstanceKey {
  if (!isIdentifier(family)) throw new ArgumentError('family', 'must be a C identifier', family);
  const tags = options.tags ?? {};
  const parts: string[] = [family];
  for (const [key, tag] of Object.entries(tags)) {
    if (!Object.hasOwn(config, key)) throw new ArgumentError(`tags.${key}`, 'names a key the config does not have', Object.keys(config));
    if (!/^[A-Za-z0-9_]*$/.test(tag)) throw new ArgumentError(`tags.${key}`, 'must use only letters, digits and _', tag);
    parts.push(`${tag}${namePart(config[key]!, `config.${key}`)}`);
  }
  const name = parts.filter((p) => p !== '').join('_');
  if (!isIdentifier(name)) throw new ArgumentError('name', 'the instance name must be a C identifier', name);
  const canonical = canonicalJson({ family, config });
  return Object.freeze({ family, config: Object.freeze({ ...config }), name, hash: sha256Hex(canonical).slice(0, 16), canonical });
}
