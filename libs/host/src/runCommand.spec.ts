import fc from 'fast-check';
import { ArgumentError, TilekitError } from '@tilekit/numeric';
import { describe, expect, it } from 'vitest';
import { ArgParseError } from './argParser.ts';
import { formatUserError, isUserError, runCommand, USER_ERROR_EXIT_CODE } from './runCommand.ts';

function capture() {
  const io = { out: '', err: '', code: -1 };
  return {
    io,
    sink: { stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t), exit: (c: number) => void (io.code = c) },
  };
}

describe('isUserError', () => {
  it("typed errors and node:util parseArgs usage errors are the user's; plain errors are bugs", () => {
    const usage = Object.assign(new TypeError("Unknown option '--x'"), { code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' });
    const fsError = Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT' });
    const cases: [unknown, boolean][] = [
      [new TilekitError('x/y', 'typed'), true],
      [new ArgumentError('n', 'must be positive', 0), true],
      [new ArgParseError('-n', '-n=0: must be at least 1'), true],
      [usage, true],
      [fsError, false],
      [new TypeError('undefined is not a function'), false],
      [new Error('internal'), false],
      ['a string', false],
      [undefined, false],
    ];
    for (const [error, user] of cases) expect(isUserError(error), String(error)).toBe(user);
  });
});

describe('formatUserError', () => {
  it('any message becomes one line starting with "error: "', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', ' ', '\n', '\r', ':', 'é', '\t') }), (message) => {
        const line = formatUserError(new TilekitError('t/x', message));
        expect(line.startsWith('error: ')).toBe(true);
        expect(line).not.toMatch(/[\r\n]/);
        expect(line.length).toBeGreaterThan('error: '.length);
      }),
    );
  });

  it('golden: lines trimmed and joined by "; ", the name when the message is empty', () => {
    expect(formatUserError(new ArgParseError('-b', '-b=x: expected an integer'))).toBe('error: -b=x: expected an integer');
    expect(formatUserError(new TilekitError('t/x', 'head\n  detail one\r\n\n  detail two  '))).toBe('error: head; detail one; detail two');
    expect(formatUserError(new TilekitError('t/x', ''))).toBe('error: TilekitError');
  });
});

describe('runCommand', () => {
  it("reports main's exit code (0 for nothing) and passes it the io", async () => {
    const { io, sink } = capture();
    expect(await runCommand((out) => void out.stdout('hi\n'), sink)).toBe(0);
    expect([io.out, io.code]).toEqual(['hi\n', 0]);
    expect(await runCommand(async () => 3, sink)).toBe(3);
    expect(io.code).toBe(3);
  });

  it('a user error: one line on stderr, exit 2, nothing on stdout', async () => {
    const { io, sink } = capture();
    expect(
      await runCommand(() => {
        throw new TilekitError('runtime/compiler-unavailable', 'NVRTC is not available: libnvrtc.so.13: cannot open');
      }, sink),
    ).toBe(USER_ERROR_EXIT_CODE);
    expect([io.err, io.code, io.out]).toEqual(['error: NVRTC is not available: libnvrtc.so.13: cannot open\n', 2, '']);
  });

  it('a bug propagates with its stack and sets no exit code', async () => {
    const { io, sink } = capture();
    const bug = new TypeError('x is undefined');
    await expect(runCommand(() => Promise.reject(bug), sink)).rejects.toBe(bug);
    expect([io.err, io.code]).toEqual(['', -1]);
  });
});
