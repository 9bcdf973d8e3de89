import { ArgumentError } from '@tilekit/numeric';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cacheEnabled, cacheMaxBytes, DEFAULT_CACHE_MAX_MB, defaultCacheDir, kernelCacheSettings } from './kernelCacheSettings.ts';

describe('kernel cache settings', () => {
  it('reads the root from $TILEKIT_CACHE_DIR, ignoring an empty value', () => {
    expect(defaultCacheDir({ TILEKIT_CACHE_DIR: '/x/y' })).toBe('/x/y');
    expect(defaultCacheDir({ TILEKIT_CACHE_DIR: '' })).toMatch(/\.cache\/tilekit\/kernels$/);
  });

  it('switches caching with $TILEKIT_CACHE', () => {
    for (const value of [undefined, '', 'on', 'ON', '1', 'true', 'yes']) expect(cacheEnabled({ TILEKIT_CACHE: value })).toBe(true);
    for (const value of ['off', 'Off', '0', 'false', 'no', ' off ']) expect(cacheEnabled({ TILEKIT_CACHE: value })).toBe(false);
    expect(() => cacheEnabled({ TILEKIT_CACHE: 'of' })).toThrow(/^TILEKIT_CACHE: must be on or off/);
  });

  it('caps at $TILEKIT_CACHE_MAX_MB MiB (default 1024, 0 for no cap)', () => {
    expect(cacheMaxBytes({})).toBe(DEFAULT_CACHE_MAX_MB * 1024 * 1024);
    expect(cacheMaxBytes({ TILEKIT_CACHE_MAX_MB: '' })).toBe(DEFAULT_CACHE_MAX_MB * 1024 * 1024);
    expect(cacheMaxBytes({ TILEKIT_CACHE_MAX_MB: '0.5' })).toBe(512 * 1024);
    expect(cacheMaxBytes({ TILEKIT_CACHE_MAX_MB: '0' })).toBe(Infinity);
    expect(kernelCacheSettings({ TILEKIT_CACHE_DIR: '/c', TILEKIT_CACHE: 'off', TILEKIT_CACHE_MAX_MB: '2' })).toEqual({
      dir: '/c',
      enabled: false,
      maxBytes: 2 * 1024 * 1024,
    });
  });

  it('rejects a $TILEKIT_CACHE_MAX_MB that is not a number >= 0, naming the variable', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.constantFrom('-1', 'abc', '1e400', 'NaN', '10MB'),
          fc.string().filter((s) => s.trim() !== '' && !(Number(s) >= 0)),
        ),
        (raw) => {
          expect(() => cacheMaxBytes({ TILEKIT_CACHE_MAX_MB: raw })).toThrow(ArgumentError);
          expect(() => cacheMaxBytes({ TILEKIT_CACHE_MAX_MB: raw })).toThrow(/^TILEKIT_CACHE_MAX_MB: /);
        },
      ),
    );
  });
});
