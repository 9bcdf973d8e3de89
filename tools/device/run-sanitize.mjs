#!/usr/bin/env node
// The compute-sanitizer runner (`npm run test:sanitize`; on the GPU machine through
// `run-on-gpu.sh --sanitize`). For each tool (memcheck, racecheck with hazard reports, synccheck,
// initcheck) and each kernel family of the plan (sanitizeCases.mjs) it runs compute-sanitizer over
// ONE node process that imports the family's GPU test bundles and selects its small cases with
// --test-name-pattern, reads the tool's summary and reports (sanitizeReport.mjs) and the runtime's
// launch log (TILEKIT_LAUNCH_LOG: which kernels ran, how often), and writes <out>/sanitize.json:
//   { commit, device, date, provenance: { driver, smClockMHz, ... } (provenance.mjs), ...,
//     tools: { memcheck: { families: { fmhaFwd: { kernels, launches, findings, sample, ... } } } } }
// after every run (a stopped runner leaves what it had), plus each run's output in
// <out>/sanitize/<tool>-<family>.log. Exit 1 on any finding or an incomplete run (stopped by
// --timeout or --budget, no summary line, a test failing, nothing selected, left out by --budget), else 0.
// Without compute-sanitizer or a CUDA device it says so LOUDLY (`SKIPPED: ...`) and exits 0, like
// run-gpu-tests.mjs. --check-plan runs no sanitizer: it lists what each family selects (no GPU needed).
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { recordProvenance } from './provenance.mjs';
import { familySelectors, SANITIZE_PLAN, SANITIZER_TOOLS, selectorLabel, selectorMatches, selectorPattern } from './sanitizeCases.mjs';
import { familyResult, parseTapTests } from './sanitizeReport.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const ENTRY = join(here, 'sanitize-entry.mjs');
const ADDON = 'tilekit_runtime.node';
const TOOLS = Object.keys(SANITIZER_TOOLS);
const FAMILIES = SANITIZE_PLAN.map((f) => f.family);
const USAGE = `usage: node tools/device/run-sanitize.mjs [--tools list] [--families list] [--out dir] [--bundles dir] [--addon file.node]
                                         [--sanitizer path] [--timeout seconds] [--budget seconds] [--print-limit n] [--check-plan]
  --tools list         comma-separated, of ${TOOLS.join(',')} (default: all, in that order)
  --families list      comma-separated, of ${FAMILIES.join(',')} (default: all)
  --out dir            where sanitize.json and the runs' logs (sanitize/<tool>-<family>.log) go (default $OUT, else .device/out)
  --bundles dir        the GPU test bundles (.device/gpu-tests after pack.mjs); default: bundle the workspace's specs first
  --addon file.node    the native addon (default: beside the bundles, or this checkout's build)
  --sanitizer path     compute-sanitizer (default: on PATH, else /usr/local/cuda/bin/compute-sanitizer)
  --timeout seconds    stop one run (one tool over one family) after this long (default 300)
  --budget seconds     the whole run's wall time (default: no limit): a run still going then is stopped, later runs are not
                       started; both count as incomplete (fits the runner into a device call's time limit)
  --print-limit n      reports the tool prints per run (default 10; its summary still counts them all)
  --check-plan         no sanitizer: list the tests each family selects (no GPU needed) and fail on a selector that matches none
Exit: 0 clean (or SKIPPED: no compute-sanitizer / no CUDA device), 1 a finding or an incomplete run, 2 bad usage.`;

/** Exits 2 with one line on stderr: a bad command line needs no stack. */
function usageError(problem) {
  console.error(`run-sanitize: ${problem} (see --help)`);
  process.exit(2);
}

/** A comma-separated list, each item one of `known`; all of them when absent. */
function listOption(flag, value, known) {
  if (value === undefined) return [...known];
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = items.filter((s) => !known.includes(s));
  if (items.length === 0 || unknown.length > 0)
    usageError(`${flag}: unknown ${unknown.length > 0 ? `'${unknown.join("', '")}'` : 'empty list'}; one or more of ${known.join(', ')}`);
  return known.filter((k) => items.includes(k));
}

/** A positive number option (seconds, counts). */
function positiveOption(flag, value, fallback, integer = false) {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!(n > 0) || (integer && !Number.isInteger(n)))
    usageError(`${flag} must be a positive ${integer ? 'integer' : 'number'}, got '${value}'`);
  return n;
}

/** The command line, checked. */
function parseCli(argv) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        tools: { type: 'string' },
        families: { type: 'string' },
        out: { type: 'string' },
        bundles: { type: 'string' },
        addon: { type: 'string' },
        sanitizer: { type: 'string' },
        timeout: { type: 'string' },
        budget: { type: 'string' },
        'print-limit': { type: 'string' },
        'check-plan': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    usageError(error.message.replaceAll('\n', ' '));
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (values.bundles !== undefined && !existsSync(values.bundles))
    usageError(`--bundles: no folder ${values.bundles} (run node tools/device/pack.mjs and carry .device)`);
  if (values.addon !== undefined && !existsSync(values.addon)) usageError(`--addon: no file ${values.addon}`);
  if (values.sanitizer !== undefined && !existsSync(values.sanitizer)) usageError(`--sanitizer: no file ${values.sanitizer}`);
  return {
    tools: listOption('--tools', values.tools, TOOLS),
    families: listOption('--families', values.families, FAMILIES),
    out: resolve(values.out ?? process.env['OUT'] ?? join(root, '.device', 'out')),
    bundles: values.bundles === undefined ? undefined : resolve(values.bundles),
    addon: values.addon,
    sanitizer: values.sanitizer,
    timeoutS: positiveOption('--timeout', values.timeout, 300),
    budgetS: positiveOption('--budget', values.budget, Infinity),
    printLimit: positiveOption('--print-limit', values['print-limit'], 10, true),
    checkPlan: values['check-plan'] === true,
  };
}

/** compute-sanitizer: --sanitizer, else the first on PATH, else CUDA's default place; null if none. */
function findSanitizer(explicit) {
  if (explicit !== undefined) return resolve(explicit);
  const dirs = (process.env['PATH'] ?? '').split(delimiter).filter(Boolean);
  const candidates = [...dirs.map((d) => join(d, 'compute-sanitizer')), '/usr/local/cuda/bin/compute-sanitizer'];
  return candidates.find((p) => existsSync(p)) ?? null;
}

/** The addon every run loads (as run-gpu-tests.mjs finds it): --addon, beside the bundles, or this checkout's build. */
function findAddon(explicit, bundles) {
  const candidates = [
    explicit,
    process.env['TILEKIT_ADDON_PATH'] || undefined,
    ...(bundles ? [join(bundles, ADDON), join(bundles, '..', ADDON)] : []),
    join(root, 'libs', 'runtime', 'build', 'Release', ADDON),
  ].filter((p) => p !== undefined);
  return resolve(candidates.find((p) => existsSync(p)) ?? candidates[0] ?? ADDON);
}

/** The addon's device probe, or why there is none. */
function probeDevice(addon) {
  try {
    const probe = createRequire(import.meta.url)(addon).probe();
    return probe.driver === true && probe.deviceCount > 0
      ? { ok: true, probe }
      : { ok: false, reason: probe.reason ?? `no device (${JSON.stringify(probe)})` };
  } catch (error) {
    return { ok: false, reason: `native addon not loadable (${addon}): ${error.message.split('\n')[0]}` };
  }
}

/** Bundles the workspace's GPU specs into a temp folder laid out like .device/ (a dev checkout with esbuild). */
async function bundleWorkspace() {
  const dir = mkdtempSync(join(tmpdir(), 'tilekit-sanitize-bundles-'));
  const { bundleForDevice, GPU_TESTS_DIR } = await import('./bundle.mjs');
  const { specs } = await bundleForDevice({ outDir: dir, mapsDir: join(dir, 'maps') });
  console.log(`sanitize: bundled ${specs.length} GPU spec files into ${dir} (maps in ${join(dir, 'maps')})`);
  return join(dir, GPU_TESTS_DIR);
}

/** Every bundle the selected families need must be there: a missing one is a stale pack. */
function checkBundles(families, bundles) {
  const missing = families.flatMap((f) => Object.keys(f.bundles)).filter((b) => !existsSync(join(bundles, b)));
  if (missing.length > 0) usageError(`no bundle ${missing.join(', ')} in ${bundles} (pack again: node tools/device/pack.mjs)`);
}

/**
 * Runs `command` in its own process group with stdout and stderr into `logFile` (headed by the
 * command line), stopping the whole group after `timeoutS` (compute-sanitizer's target is a child
 * of it). Resolves with the output, exit code or signal, whether it was stopped, and the seconds.
 */
function runLogged(command, args, { env, timeoutS, logFile }) {
  const log = createWriteStream(logFile);
  log.write(`# ${[command, ...args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`)).join(' ')}\n`);
  const started = Date.now();
  return new Promise((resolveRun) => {
    const child = spawn(command, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let timedOut = false;
    const stop = (signal) => {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // the group is gone already
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop('SIGTERM');
      setTimeout(() => stop('SIGKILL'), 15_000).unref();
    }, timeoutS * 1000);
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.on('error', (error) => log.write(`run-sanitize: cannot start ${command}: ${error.message}\n`));
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      log.end(() => resolveRun({ output: readLog(logFile), exitCode, signal, timedOut, seconds: (Date.now() - started) / 1000 }));
    });
  });
}

/** A run's log; past 200 MB only its last 50 MB (the summary is at the end). */
function readLog(file) {
  const size = statSync(file).size;
  if (size <= 200 * 2 ** 20) return readFileSync(file, 'utf8');
  return readFileSync(file)
    .subarray(size - 50 * 2 ** 20)
    .toString('utf8');
}

/** node's arguments for one family: TAP output, the family's patterns, the entry and its bundles. */
function nodeArgs(entry, bundles, patterns) {
  return [
    '--test-reporter=tap',
    ...patterns.map((p) => `--test-name-pattern=${p}`),
    ENTRY,
    ...Object.keys(entry.bundles).map((b) => join(bundles, b)),
  ];
}

/** One line of a command's output, or `fallback` when it cannot run. */
function firstLineOf(command, args, fallback, last = false) {
  try {
    const lines = execFileSync(command, args, { stdio: ['ignore', 'pipe', 'ignore'], timeout: 30_000 })
      .toString()
      .trim()
      .split('\n')
      .filter(Boolean);
    return (last ? lines[lines.length - 1] : lines[0])?.trim() ?? fallback;
  } catch {
    return fallback;
  }
}

/** Writes sanitize.json (through a temp file: a reader never sees half of it). */
function writeSummary(out, summary) {
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'sanitize.json.partial'), `${JSON.stringify(summary, null, 2)}\n`);
  renameSync(join(out, 'sanitize.json.partial'), join(out, 'sanitize.json'));
}

/** One progress line for a finished run. */
function describeRun(tool, family, r) {
  const head = `sanitize: ${tool} × ${family}: `;
  const what =
    `${r.tests.passed} passed, ${r.tests.failed} failed of ${r.tests.matched} tests; ` +
    `${r.launches} launches of ${r.kernels.length} kernels; ${r.findings} findings (` +
    `${r.seconds} s)`;
  if (r.status === 'clean') return `${head}clean — ${what}`;
  const kernels = Object.entries(r.findingsByKernel)
    .map(([k, n]) => `${k}: ${n}`)
    .join(', ');
  const first = r.sample[0] ? `\n    first: ${r.sample[0].kind}${r.sample[0].kernel ? ` in ${r.sample[0].kernel}` : ''}` : '';
  const problems = r.problems.length > 0 ? `\n    ${r.problems.join('; ')}` : '';
  return `${head}${r.status.toUpperCase()} — ${what}${kernels ? `\n    findings by kernel: ${kernels}` : ''}${first}${problems}\n    log: ${r.log}`;
}

/** Runs one tool over one family, stopped at --timeout or when --budget runs out; its sanitize.json entry. */
async function sanitizeRun(ctx, tool, entry, budgetLeftS) {
  const patterns = familySelectors(entry).map(({ selector }) => selectorPattern(selector));
  const launchFile = join(ctx.scratch, `${tool}-${entry.family}.launches`);
  writeFileSync(launchFile, '');
  const logFile = join(ctx.out, 'sanitize', `${tool}-${entry.family}.log`);
  const args = [
    ...SANITIZER_TOOLS[tool],
    '--print-limit',
    String(ctx.printLimit),
    '--target-processes',
    'application-only',
    process.execPath,
    ...nodeArgs(entry, ctx.bundles, patterns),
  ];
  const env = { ...process.env, TILEKIT_ADDON_PATH: ctx.addon, TILEKIT_LAUNCH_LOG: launchFile, TILEKIT_CACHE_DIR: ctx.cacheDir };
  console.log(`sanitize: ${tool} × ${entry.family} (${Object.keys(entry.bundles).length} bundle(s), ${patterns.length} selectors) ...`);
  const byBudget = budgetLeftS < ctx.timeoutS;
  const run = await runLogged(ctx.sanitizer, args, { env, timeoutS: Math.min(ctx.timeoutS, budgetLeftS), logFile });
  const result = familyResult({ ...run, launchLog: readFileSync(launchFile, 'utf8'), log: relative(ctx.out, logFile) });
  if (run.timedOut && byBudget)
    result.problems[0] = `stopped when the --budget of ${ctx.budgetS} s ran out (after ${run.seconds.toFixed(0)} s)`;
  return result;
}

/** The entry of a run the budget left out. */
function notRun(budgetS) {
  return {
    status: 'incomplete',
    kernels: [],
    launches: 0,
    findings: 0,
    sample: [],
    problems: [`not run: the --budget of ${budgetS} s was spent`],
    tests: { matched: 0, passed: 0, failed: 0, skipped: 0, failedTests: [] },
    seconds: 0,
  };
}

/** Totals over every run so far, and the verdict. */
function totals(tools) {
  const runs = Object.values(tools).flatMap((t) => Object.values(t.families));
  const findings = runs.reduce((s, r) => s + r.findings, 0);
  const incomplete = runs.filter((r) => r.status === 'incomplete').length;
  return { runs: runs.length, findings, incomplete, status: findings > 0 ? 'findings' : incomplete > 0 ? 'incomplete' : 'clean' };
}

/** The closing table: one line per run, then the verdict. */
function printTable(tools) {
  const line = '='.repeat(78);
  const rows = Object.entries(tools).flatMap(([tool, t]) =>
    Object.entries(t.families).map(
      ([family, r]) =>
        `  ${tool.padEnd(10)} ${family.padEnd(16)} ${r.status.padEnd(10)} ` +
        `${String(r.tests.matched).padStart(3)} tests ${String(r.launches).padStart(6)} launches ` +
        `${String(r.kernels.length).padStart(3)} kernels ${String(r.findings).padStart(5)} ` +
        `findings ${String(r.seconds).padStart(6)} s`,
    ),
  );
  const t = totals(tools);
  const verdict =
    t.status === 'clean'
      ? `SANITIZE: clean — 0 findings in ${t.runs} runs`
      : `SANITIZE: ${t.status.toUpperCase()} — ${t.findings} findings, ${t.incomplete} incomplete of ${t.runs} runs`;
  console.log(`\n${line}\n${verdict}\n${rows.join('\n')}\n${line}`);
}

/** The sanitizer runs: every tool over every family, sanitize.json rewritten after each. */
async function sanitize(config, families) {
  const sanitizer = findSanitizer(config.sanitizer);
  if (sanitizer === null)
    return skip(`no compute-sanitizer on PATH or in /usr/local/cuda/bin (install the CUDA toolkit's, or pass --sanitizer)`);
  const addon = findAddon(config.addon, config.bundles);
  const device = probeDevice(addon);
  if (!device.ok) return skip(`no CUDA device: ${device.reason}`);
  const bundles = config.bundles ?? (await bundleWorkspace());
  checkBundles(families, bundles);
  const scratch = mkdtempSync(join(tmpdir(), 'tilekit-sanitize-'));
  // One kernel cache for every run: each tool would otherwise compile the family's kernels again.
  const cacheDir = process.env['TILEKIT_CACHE_DIR'] || join(scratch, 'kernel-cache');
  const ctx = { ...config, sanitizer, addon, bundles, scratch, cacheDir };
  mkdirSync(join(config.out, 'sanitize'), { recursive: true });
  const summary = {
    // Bundles from a pack: the commit of its manifest (beside the bundles' folder); bundled here: git's.
    ...recordProvenance({
      manifestPath: config.bundles === undefined ? undefined : join(bundles, '..', 'manifest.json'),
      root,
      fallbackDevice: `unknown (probe ${JSON.stringify(device.probe)})`,
    }),
    sanitizer: firstLineOf(sanitizer, ['--version'], 'unknown', true),
    node: process.version,
    options: {
      tools: config.tools,
      families: config.families,
      timeoutS: config.timeoutS,
      budgetS: Number.isFinite(config.budgetS) ? config.budgetS : null,
      printLimit: config.printLimit,
    },
    tools: {},
  };
  console.log(
    `sanitize: ${sanitizer} (${summary.sanitizer}) on ${summary.device}; ` +
      `${config.tools.length} tools × ${families.length} families; logs in ` +
      `${join(config.out, 'sanitize')}`,
  );
  const started = Date.now();
  for (const tool of config.tools) {
    const entry = (summary.tools[tool] = { args: SANITIZER_TOOLS[tool], findings: 0, seconds: 0, families: {} });
    for (const family of families) {
      const budgetLeftS = config.budgetS - (Date.now() - started) / 1000;
      const overBudget = budgetLeftS <= 0;
      const result = overBudget ? notRun(config.budgetS) : await sanitizeRun(ctx, tool, family, budgetLeftS);
      entry.families[family.family] = result;
      entry.findings += result.findings;
      entry.seconds = Number((entry.seconds + result.seconds).toFixed(1));
      console.log(
        overBudget
          ? `sanitize: ${tool} × ${family.family}: NOT RUN (--budget ${config.budgetS} s spent)`
          : describeRun(tool, family.family, result),
      );
      Object.assign(summary, totals(summary.tools));
      writeSummary(config.out, summary);
    }
  }
  printTable(summary.tools);
  console.log(`sanitize: wrote ${join(config.out, 'sanitize.json')}`);
  rmSync(scratch, { recursive: true, force: true });
  return summary.status === 'clean' ? 0 : 1;
}

/** Says LOUDLY why nothing ran; a machine without the tool or a GPU is not a failure. */
function skip(reason) {
  const line = '='.repeat(78);
  console.log(`${line}\nSKIPPED: ${reason} (no compute-sanitizer run)\n${line}`);
  return 0;
}

/** The test names of one bundle, as node:test sees them: a pattern that matches nothing lists them all and runs none. */
async function testNamesOf(bundle, scratch) {
  const logFile = join(scratch, `list-${bundle.split('/').pop()}.log`);
  const run = await runLogged(process.execPath, ['--test-reporter=tap', '--test-name-pattern=(?!)', ENTRY, bundle], {
    env: process.env,
    timeoutS: 300,
    logFile,
  });
  const names = parseTapTests(run.output).map((t) => t.name);
  return run.exitCode === 0
    ? { names }
    : { names, error: `listing ${bundle} exited ${run.exitCode ?? run.signal}: ${run.output.split('\n').slice(-5).join(' | ')}` };
}

/** What each family selects; problems: a selector matching none of its bundle's tests, a bundle that fails to load. */
async function planReport(entry, bundles, scratch) {
  const report = { family: entry.family, covers: entry.covers, bundles: {}, problems: [] };
  const all = familySelectors(entry);
  for (const [bundle, selectors] of Object.entries(entry.bundles)) {
    const { names, error } = await testNamesOf(join(bundles, bundle), scratch);
    if (error) report.problems.push(error);
    for (const s of selectors)
      if (!names.some((n) => selectorMatches(s, n))) report.problems.push(`${bundle}: no test matches '${selectorLabel(s)}'`);
    // In the family's process every pattern applies to every bundle: what it really runs here.
    const selected = names.filter((n) => all.some(({ selector }) => selectorMatches(selector, n)));
    report.bundles[bundle] = { tests: names.length, selected };
  }
  // node's own matching must agree: the family's process with its patterns, every GPU hidden (so nothing runs).
  const logFile = join(scratch, `select-${entry.family}.log`);
  const env = { ...process.env, CUDA_VISIBLE_DEVICES: '-1' };
  const run = await runLogged(
    process.execPath,
    nodeArgs(
      entry,
      bundles,
      all.map(({ selector }) => selectorPattern(selector)),
    ),
    { env, timeoutS: 300, logFile },
  );
  const byNode = parseTapTests(run.output)
    .filter((t) => t.status !== 'unmatched')
    .map((t) => t.name);
  const byPlan = Object.values(report.bundles).flatMap((b) => b.selected);
  if (byNode.join('\n') !== byPlan.join('\n'))
    report.problems.push(
      `node selects ${byNode.length} tests, the plan's matcher ${byPlan.length}: ` +
        `${[...byNode.filter((n) => !byPlan.includes(n)), ...byPlan.filter((n) => !byNode.includes(n))].slice(0, 3).join(' | ')}`,
    );
  return report;
}

/** --check-plan: each family's selection, without a sanitizer or a GPU. Exit 1 on a problem. */
async function checkPlan(config, families) {
  const bundles = config.bundles ?? (await bundleWorkspace());
  checkBundles(families, bundles);
  const scratch = mkdtempSync(join(tmpdir(), 'tilekit-sanitize-plan-'));
  const reports = [];
  for (const entry of families) reports.push(await planReport(entry, bundles, scratch));
  rmSync(scratch, { recursive: true, force: true });
  // Bundles made here only for the listing have no further use (the sanitizer runs keep theirs, with the maps for symbolize.mjs).
  if (config.bundles === undefined) rmSync(dirname(bundles), { recursive: true, force: true });
  for (const r of reports) {
    const picked = Object.values(r.bundles).reduce((s, b) => s + b.selected.length, 0);
    console.log(`plan: ${r.family}: ${picked} tests — ${r.covers}`);
    for (const [bundle, b] of Object.entries(r.bundles)) for (const name of b.selected) console.log(`  ${bundle}: ${name}`);
    for (const p of r.problems) console.log(`  PROBLEM: ${p}`);
  }
  console.log(`PLAN JSON ${JSON.stringify(reports)}`);
  const problems = reports.flatMap((r) => r.problems);
  console.log(problems.length === 0 ? `plan: ok, ${reports.length} families` : `plan: ${problems.length} problem(s)`);
  return problems.length === 0 ? 0 : 1;
}

const config = parseCli(process.argv.slice(2));
const families = SANITIZE_PLAN.filter((f) => config.families.includes(f.family));
process.exit(config.checkPlan ? await checkPlan(config, families) : await sanitize(config, families));
