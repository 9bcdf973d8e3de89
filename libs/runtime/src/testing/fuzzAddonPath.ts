// Points this process's addon loading at a JS fake, for the fuzz specs that run without CUDA. The
// runtime loads its addon from $TILEKIT_ADDON_PATH; this module points it at a CommonJS shim that
// forwards every call to `globalThis.__tilekitFuzzAddon` (the fake `useFuzzFakeAddon` installs) and
// answers "no device" until one is installed. Import it FIRST in a spec (before anything that
// imports @tilekit/runtime, whose test fixture probes the addon as it loads) and call
// `restoreAddonPath` after the spec. Kept out of the testing barrel (importing it changes where
// the addon loads from): `@tilekit/runtime/testing/fuzzAddonPath`.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SHIM = `'use strict';
const none = { abiVersion: 1, setErrorFactory() {}, probe: () => ({ driver: false, deviceCount: 0, nvrtc: false, reason: 'no fuzz fake addon installed' }) };
module.exports = new Proxy({}, {
  get(_, key) {
    const target = globalThis.__tilekitFuzzAddon ?? none;
    const value = target[key];
    return typeof value === 'function' ? value.bind(target) : value;
  },
});
`;

const previous = process.env['TILEKIT_ADDON_PATH'];
const dir = mkdtempSync(join(tmpdir(), 'tilekit-fuzz-addon-'));
writeFileSync(join(dir, 'fuzz_addon.cjs'), SHIM);
process.env['TILEKIT_ADDON_PATH'] = join(dir, 'fuzz_addon.cjs');

/**
 * Restores $TILEKIT_ADDON_PATH as it was (later spec files of the same worker load the real addon)
 * and removes the shim (the runtime loaded it once and keeps it).
 */
export function restoreAddonPath(): void {
  if (previous === undefined) delete process.env['TILEKIT_ADDON_PATH'];
  else process.env['TILEKIT_ADDON_PATH'] = previous;
  rmSync(dir, { recursive: true, force: true });
}
