import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ADDON_FILE, addonCandidates, findAddon, loadAddon } from './addon.ts';
import { probe } from './probe.ts';

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
const builtAddon = join(packageDir, 'build', 'Release', ADDON_FILE);
const hasDriver = probe().driver;

// Runs a snippet against the package sources in a fresh node process (tsx, source condition).
function runTs(code: string, env: NodeJS.ProcessEnv): string {
  const out = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=@tilekit/source', '--input-type=module', '-e', code], {
    cwd: packageDir,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (out.status !== 0) throw new Error(`child failed (${out.status}): ${out.stderr}`);
  return out.stdout.trim();
}

describe('native addon', () => {
  it('is built by the install script and loads', () => {
    expect(existsSync(builtAddon), `missing ${builtAddon}: run node libs/runtime/scripts/build-native.mjs`).toBe(true);
    expect(findAddon()).toBe(builtAddon);
    const native = loadAddon();
    expect(native.abiVersion).toBe(1);
    for (const name of [
      'probe',
      'memAlloc',
      'memcpyHtoD',
      'launchKernel',
      'tensorMapEncodeTiled',
      'nvrtcCompile',
      'streamBeginCapture',
      'graphLaunch',
    ]) {
      expect(typeof (native as unknown as Record<string, unknown>)[name], name).toBe('function');
    }
  });

  it('looks beside the module first, then in build/Release, unless TILEKIT_ADDON_PATH says otherwise', () => {
    const [beside, built] = addonCandidates({});
    expect(beside).toBe(join(packageDir, 'src', ADDON_FILE));
    expect(built).toBe(builtAddon);
    expect(addonCandidates({ TILEKIT_ADDON_PATH: '/opt/x.node' })).toEqual(['/opt/x.node']);
  });

  it.skipIf(process.env['TILEKIT_SKIP_NATIVE'] !== undefined)(
    'builds offline with node-gyp against the local Node headers',
    () => {
      const scratch = join(packageDir, 'tmp', `build-check-${process.pid}`);
      rmSync(scratch, { recursive: true, force: true });
      mkdirSync(join(scratch, 'scripts'), { recursive: true });
      try {
        cpSync(join(packageDir, 'binding.gyp'), join(scratch, 'binding.gyp'));
        cpSync(join(packageDir, 'src', 'native'), join(scratch, 'src', 'native'), { recursive: true });
        cpSync(join(packageDir, 'scripts', 'build-native.mjs'), join(scratch, 'scripts', 'build-native.mjs'));
        writeFileSync(join(scratch, 'package.json'), '{ "name": "build-check", "private": true }\n');
        const out = spawnSync(process.execPath, ['scripts/build-native.mjs'], { cwd: scratch, encoding: 'utf8' });
        expect(out.status, `${out.stdout}\n${out.stderr}`).toBe(0);
        expect(out.stdout).toMatch(/tilekit: built .*tilekit_runtime\.node/);
        expect(existsSync(join(scratch, 'build', 'Release', ADDON_FILE))).toBe(true);
        // The addon links no CUDA library: everything CUDA is dlopened on first use.
        const ldd = spawnSync('ldd', [join(scratch, 'build', 'Release', ADDON_FILE)], { encoding: 'utf8' });
        if (ldd.status === 0) expect(ldd.stdout).not.toMatch(/libcuda|libnvrtc|libcudart/);
      } finally {
        rmSync(scratch, { recursive: true, force: true });
        // gyp writes node-addon-api's stamp file relative to the package depth: tmp/node_modules.
        rmSync(join(dirname(scratch), 'node_modules'), { recursive: true, force: true });
        try {
          rmdirSync(dirname(scratch)); // tmp/ itself, when nothing else is in it
        } catch {
          // not empty: leave it
        }
      }
    },
    180_000,
  );
});

describe('probe', () => {
  it('never throws and is self-consistent', () => {
    const p = probe();
    expect(p.addon).toBe(true);
    expect(typeof p.driver).toBe('boolean');
    expect(typeof p.nvrtc).toBe('boolean');
    if (!p.driver) {
      expect(p.deviceCount).toBe(0);
      expect(p.reason).toBeTruthy();
    }
    if (!p.nvrtc) expect(p.nvrtcReason).toMatch(/libnvrtc/);
  });

  it.skipIf(hasDriver)('reports a missing CUDA driver as a value with the dlopen reason', () => {
    const p = probe();
    expect(p).toMatchObject({ addon: true, driver: false, deviceCount: 0 });
    expect(p.reason).toMatch(/cannot load the CUDA driver library \(libcuda\.so\.1\)/);
  });

  it('reports a driver library that is not there (TILEKIT_LIBCUDA_PATH), even on GPU machines', () => {
    const out = JSON.parse(
      runTs("import { probe } from '@tilekit/runtime'; console.log(JSON.stringify(probe()));", {
        TILEKIT_LIBCUDA_PATH: '/nonexistent/libcuda.so.1',
      }),
    ) as ReturnType<typeof probe>;
    expect(out).toMatchObject({ addon: true, driver: false, deviceCount: 0 });
    expect(out.reason).toContain('/nonexistent/libcuda.so.1');
  });

  it('reports a missing addon as a value that says how to build it', () => {
    const out = JSON.parse(
      runTs("import { probe } from '@tilekit/runtime'; console.log(JSON.stringify(probe()));", {
        TILEKIT_ADDON_PATH: '/nonexistent/tilekit_runtime.node',
      }),
    ) as ReturnType<typeof probe>;
    expect(out).toMatchObject({ addon: false, driver: false, deviceCount: 0, nvrtc: false });
    expect(out.reason).toMatch(/build-native/);
  });
});
