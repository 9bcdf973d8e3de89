// Reading what one compute-sanitizer run printed (tools/device/run-sanitize.mjs): the tool's lines
// (prefixed "========= ") interleaved with the node:test TAP output of the bundles it ran, and the
// launch log the runtime wrote (TILEKIT_LAUNCH_LOG: one kernel name per accepted launch). Pure
// functions over text, so that the unit test can feed them real-looking output of every tool.

const PREFIX = '========= ';
const SAMPLE_LINES = 12;

/** The tool's lines of `text` with the prefix removed ('' for its bare separator lines). */
export function sanitizerLines(text) {
  const out = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (line.startsWith(PREFIX)) out.push(line.slice(PREFIX.length));
    else if (line === PREFIX.trimEnd()) out.push('');
  }
  return out;
}

/** The summary counts, or null when the run printed none (it did not finish). */
function parseSummary(lines) {
  let summary = null;
  for (const line of lines) {
    const error = /^ERROR SUMMARY: (\d+) errors?$/.exec(line);
    const race = /^RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)/.exec(line);
    const notPrinted = /^ERROR SUMMARY: (\d+) errors? (?:were|was) not printed/.exec(line);
    if (error) summary = { ...summary, errors: Number(error[1]) };
    if (race) summary = { ...summary, hazards: Number(race[1]), raceErrors: Number(race[2]), raceWarnings: Number(race[3]) };
    if (notPrinted) summary = { ...summary, notPrinted: Number(notPrinted[1]) };
  }
  return summary;
}

/** Lines that start no finding: the banner, summaries, and how the application ended. */
const NOT_FINDINGS = [
  /^COMPUTE-SANITIZER$/,
  /^(ERROR|RACECHECK|LEAK) SUMMARY:/,
  /^Target application returned an error/,
  /^Error: process didn't terminate successfully/,
];

/**
 * A line that starts a note, not a finding: the tool's own warnings and internal errors (they may
 * make its results incomplete) and its informational messages.
 */
function isNote(line) {
  if (/hazard|Race reported/i.test(line)) return false;
  return /^(Warning|WARN|Internal Sanitizer Error|INFO)\b/i.test(line);
}

/** The detail lines of a report: indented, or (some versions print them flush) one of these. */
const CONTINUATION =
  /^(at |by thread|and (Read|Write|is)|(Read|Write) Thread|Current Value|Address 0x|Saved host backtrace|Host Frame|Device Frame)/;

/** Splits the tool's lines into blocks: a header line and its detail lines. */
function blocks(lines) {
  const out = [];
  let current = null;
  for (const line of lines) {
    if (line.trim() === '') {
      current = null;
      continue;
    }
    const detail = /^\s/.test(line) || CONTINUATION.test(line);
    if (detail && current !== null) current.push(line.trim());
    else if (!detail) out.push((current = [line.trim()]));
  }
  return out;
}

/**
 * The kernel a report is about: the function of its last device frame when the tool printed a
 * backtrace, else of its first "at <function>+0x…" line (every tool's current format; also the old
 * "at 0x… in file:line:function(args)"). Demangled parameters and a return type are dropped.
 * Null for reports about the host (CUDA API errors, leaks).
 */
export function kernelOf(block) {
  // "void ns::kernel<int, 3>(float*, int)" → "ns::kernel"; extern "C" names pass unchanged.
  const clean = (name) => name.replace(/\(.*$/, '').replace(/<.*>/, '').trim().split(/\s+/).pop() || null;
  const frames = block.filter((l) => /^Device Frame:/.test(l));
  const last = frames[frames.length - 1];
  if (last !== undefined) {
    const frame = /^Device Frame:\s*(?:\[0x[0-9a-f]+\]\s*)?(.+?)\+0x[0-9a-f]+/i.exec(last);
    if (frame) return clean(frame[1]);
  }
  for (const line of block) {
    if (/^Host Frame:/.test(line)) continue;
    const current = /\bat (.+?)(?:\+|:)0x[0-9a-f]+\b/i.exec(line);
    if (current && !/^0x/i.test(current[1])) return clean(current[1]);
    const old = /\bat 0x[0-9a-f]+ in (?:.*:\d+:)?([^:]+\(.*\))/i.exec(line);
    if (old) return clean(old[1]);
  }
  return null;
}

/**
 * What the tool reported in `text` (one run's output, the program's lines mixed in):
 * `{ complete, findings, summary, reports: [{ kind, kernel, text }], notes, exitedWithError }`.
 * `findings` is the tool's own count (its summary counts reports it did not print) or, when larger,
 * the number of reports read; `complete` says a summary line was printed (the run finished).
 */
export function parseSanitizerOutput(text) {
  const lines = sanitizerLines(text);
  const summary = parseSummary(lines);
  const reports = [];
  const notes = [];
  let exitedWithError = false;
  for (const block of blocks(lines)) {
    const head = block[0];
    if (NOT_FINDINGS.some((re) => re.test(head))) {
      if (/^Target application returned an error|^Error: process didn't terminate/.test(head)) exitedWithError = true;
      continue;
    }
    if (isNote(head)) notes.push(head);
    else reports.push({ kind: head.replace(/\s*:$/, ''), kernel: kernelOf(block), text: block.slice(0, SAMPLE_LINES).join('\n') });
  }
  const counted = summary === null ? 0 : Math.max(summary.errors ?? 0, (summary.raceErrors ?? 0) + (summary.raceWarnings ?? 0));
  return { complete: summary !== null, findings: Math.max(counted, reports.length), summary, reports, notes, exitedWithError };
}

/** Findings per kernel (reports about the host count as "(host)"), from the reports read. */
export function findingsByKernel(reports) {
  const out = {};
  for (const r of reports) out[r.kernel ?? '(host)'] = (out[r.kernel ?? '(host)'] ?? 0) + 1;
  return out;
}

/** TAP escapes '#', '\' and line breaks in test names (node:test's reporter); undone here. */
function tapUnescape(name) {
  return name.replace(/\\(.)/g, (_, c) => ({ n: '\n', r: '\r', t: '\t' })[c] ?? c);
}

/** The index of the " # SKIP|TODO" directive (an unescaped '#'), or -1. */
function directiveAt(rest) {
  const re = / # (SKIP|TODO)\b/gi;
  let m;
  let found = -1;
  while ((m = re.exec(rest)) !== null) if (rest[m.index] !== '\\') found = m.index;
  return found;
}

/**
 * The top-level tests of node:test's TAP output: `[{ name, status, reason }]`, status one of
 * passed, failed, skipped, todo, unmatched (skipped because --test-name-pattern left it out).
 */
export function parseTapTests(text) {
  const tests = [];
  for (const raw of text.split('\n')) {
    const m = /^(not ok|ok) \d+ - (.*)$/.exec(raw.replace(/\r$/, ''));
    if (!m) continue;
    const at = directiveAt(m[2]);
    const name = tapUnescape(at < 0 ? m[2] : m[2].slice(0, at));
    const directive = at < 0 ? '' : m[2].slice(at + 3);
    const reason = directive.replace(/^(SKIP|TODO)\s*/i, '');
    let status = m[1] === 'not ok' ? 'failed' : 'passed';
    if (status === 'passed' && /^SKIP/i.test(directive)) status = reason === 'test name does not match pattern' ? 'unmatched' : 'skipped';
    if (status === 'passed' && /^TODO/i.test(directive)) status = 'todo';
    tests.push({ name, status, reason });
  }
  return tests;
}

/** Counts of the tests a run selected (unmatched ones left out), and the names of the failed ones. */
export function testCounts(tests) {
  const picked = tests.filter((t) => t.status !== 'unmatched');
  const count = (s) => picked.filter((t) => t.status === s).length;
  return {
    matched: picked.length,
    passed: count('passed'),
    failed: count('failed'),
    skipped: count('skipped') + count('todo'),
    failedTests: picked.filter((t) => t.status === 'failed').map((t) => t.name),
  };
}

/** The launch log: `{ launches, kernels: { name: count } }`, names sorted. */
export function summarizeLaunchLog(text) {
  const counts = {};
  let launches = 0;
  for (const line of text.split('\n')) {
    const name = line.trim();
    if (name === '') continue;
    counts[name] = (counts[name] ?? 0) + 1;
    launches++;
  }
  return {
    launches,
    kernels: Object.fromEntries(
      Object.keys(counts)
        .sort()
        .map((k) => [k, counts[k]]),
    ),
  };
}

/**
 * One family's entry in sanitize.json from a run: kernels launched, launches, findings and a sample
 * of the reports; `status` clean, findings or incomplete, and `problems` saying why it is incomplete.
 */
export function familyResult({ output, launchLog, seconds, exitCode, signal, timedOut, log }) {
  const report = parseSanitizerOutput(output);
  const tests = testCounts(parseTapTests(output));
  const launched = summarizeLaunchLog(launchLog);
  const problems = [];
  if (timedOut) problems.push(`stopped after the per-run timeout (${seconds.toFixed(0)} s)`);
  else if (!report.complete) problems.push(`no summary line from compute-sanitizer (exit ${exitCode ?? signal})`);
  if (tests.matched === 0) problems.push('no test matched the plan (renamed tests? stale pack?)');
  if (tests.failed > 0)
    problems.push(
      `${tests.failed} test(s) failed under the sanitizer: ${tests.failedTests.slice(0, 3).join(' | ')}${tests.failed > 3 ? ' | …' : ''}`,
    );
  const status = report.findings > 0 ? 'findings' : problems.length > 0 ? 'incomplete' : 'clean';
  return {
    status,
    kernels: Object.keys(launched.kernels),
    launches: launched.launches,
    launchesByKernel: launched.kernels,
    findings: report.findings,
    findingsByKernel: findingsByKernel(report.reports),
    sample: report.reports.slice(0, 5),
    summary: report.summary,
    notes: report.notes,
    tests,
    problems,
    seconds: Number(seconds.toFixed(1)),
    exitCode,
    signal,
    log,
  };
}
