import fc from 'fast-check';
import { ArgumentError, TilekitError } from '@tilekit/numeric';
import { parseArgs } from 'node:util';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { ArgParseError, ArgParser, runCli } from './argParser.ts';

const makeParser = () =>
  new ArgParser('tile_example_fmha_fwd', 'fmha forward')
    .int('b', 2, 'batch size')
    .int('h', 8, 'number of heads')
    .float('scale_s', 0, 'scale factor of S; 0 means 1/sqrt(d)')
    .string('s', '3328', 'seqlen_q; "s0,s1,..." per batch in group mode')
    .bool('lse', false, 'store the LSE')
    .choice('prec', 'fp16', ['fp16', 'bf16', 'fp8'], 'data type');

function parseError(fn: () => unknown): ArgParseError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ArgParseError) return error;
    throw error;
  }
  throw new Error('expected an ArgParseError');
}

describe('ArgParser.parse', () => {
  it('defaults, overrides and typed values', () => {
    const args = makeParser().parse(['-b=4', '-scale_s=0.125', '-prec=bf16', '-lse=1', '-s=', '-h=-1']);
    expect(args.toObject()).toEqual({ b: 4, h: -1, scale_s: 0.125, s: '', lse: true, prec: 'bf16' });
    expect(args.helpRequested).toBe(false);
    expect(args.given('b')).toBe(true);
    expect(makeParser().parse([]).given('b')).toBe(false);
    expectTypeOf(args.get('b')).toEqualTypeOf<number>();
    expectTypeOf(args.get('lse')).toEqualTypeOf<boolean>();
    expectTypeOf(args.get('prec')).toEqualTypeOf<'fp16' | 'bf16' | 'fp8'>();
    expect(args.getInt('b')).toBe(4);
    expect(args.getFloat('b')).toBe(4);
    expect(args.getFloat('scale_s')).toBe(0.125);
    expect(args.getString('prec')).toBe('bf16');
    expect(args.getString('s')).toBe('');
    expect(args.getBool('lse')).toBe(true);
  });

  it('later occurrences win; bools accept 1/0/true/false', () => {
    const p = makeParser();
    expect(p.parse(['-b=1', '-b=3']).get('b')).toBe(3);
    for (const [text, value] of [
      ['1', true],
      ['0', false],
      ['true', true],
      ['false', false],
      ['TRUE', true],
    ] as const) {
      expect(p.parse([`-lse=${text}`]).get('lse')).toBe(value);
    }
  });

  it('round trip: -key=String(value) parses back to value', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.string(),
        (b, scale, s) => {
          const args = makeParser().parse([`-b=${b}`, `-scale_s=${scale}`, `-s=${s}`]);
          expect(args.get('b')).toBe(b);
          expect(Object.is(args.get('scale_s'), scale) || (scale === 0 && args.get('scale_s') === 0)).toBe(true);
          expect(args.get('s')).toBe(s);
        },
      ),
    );
  });

  it('every declared default parses back to itself', () => {
    const p = makeParser();
    const argv = p.flags().map((f) => `-${f.key}=${f.kind === 'bool' ? Number(f.defaultValue) : f.defaultValue}`);
    expect(p.parse(argv).toObject()).toEqual(p.parse([]).toObject());
  });

  it('golden error messages: one line naming the flag', () => {
    const p = makeParser();
    const cases: [string[], string, string][] = [
      [['-bb=3'], '-bb', 'unknown flag -bb (valid: -b, -h, -scale_s, -s, -lse, -prec, -?)'],
      [['-b'], '-b', '-b needs a value: write -b=<int> (default 2)'],
      [['-prec'], '-prec', '-prec needs a value: write -prec=<fp16|bf16|fp8> (default fp16)'],
      [['-b=abc'], '-b', '-b=abc: expected an integer'],
      [['-b=1.5'], '-b', '-b=1.5: expected an integer'],
      [['-b='], '-b', '-b=: expected an integer'],
      [['-b=99999999999999999999'], '-b', '-b=99999999999999999999: expected an integer'],
      [['-scale_s=x'], '-scale_s', '-scale_s=x: expected a number'],
      [['-scale_s=1e999'], '-scale_s', '-scale_s=1e999: expected a number'],
      [['-lse=2'], '-lse', '-lse=2: expected a boolean (1, 0, true or false)'],
      [['-prec=fp32'], '-prec', '-prec=fp32: expected one of fp16, bf16, fp8'],
      [['b=2'], 'b=2', 'unexpected argument "b=2": flags are written -key=value (-? lists them)'],
      [['-=2'], '-', 'unknown flag - (valid: -b, -h, -scale_s, -s, -lse, -prec, -?)'],
    ];
    for (const [argv, flag, message] of cases) {
      const error = parseError(() => p.parse(argv));
      expect(error.message).toBe(message);
      expect(error.message).not.toContain('\n');
      expect(error.flag).toBe(flag);
      expect(error.code).toBe('host/arg-parse');
      expect(error).toBeInstanceOf(ArgumentError);
      expect(error).toBeInstanceOf(TilekitError);
    }
  });

  it('arbitrary argv either parses or raises ArgParseError', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 12 }), { maxLength: 6 }), (argv) => {
        try {
          makeParser().parse(argv);
        } catch (error) {
          expect(error).toBeInstanceOf(ArgParseError);
          expect((error as Error).message).not.toContain('\n');
        }
      }),
    );
  });

  it('-?, bare -h and --help request help even when -h is a flag', () => {
    const p = makeParser();
    for (const token of ['-?', '-h', '--help']) expect(p.parse(['-b=3', token]).helpRequested).toBe(true);
    expect(p.parse(['-h=4']).get('h')).toBe(4);
  });
});

describe('ArgParser.help', () => {
  it('golden: lists every flag with type, default and description', () => {
    expect(makeParser().help()).toBe(
      [
        'tile_example_fmha_fwd: fmha forward',
        'usage: tile_example_fmha_fwd [-key=value ...]',
        '',
        'flag      type           default  description',
        '--------  -------------  -------  ---------------------------------------------',
        '-b        int            2        batch size',
        '-h        int            8        number of heads',
        '-scale_s  float          0        scale factor of S; 0 means 1/sqrt(d)',
        '-s        string         3328     seqlen_q; "s0,s1,..." per batch in group mode',
        '-lse      bool           false    store the LSE',
        '-prec     fp16|bf16|fp8  fp16     data type',
        '-?                                print this help and exit (also -h, --help)',
      ].join('\n'),
    );
  });
});

describe('ArgParser declarations', () => {
  it('reject programming errors with ArgumentError', () => {
    const p = new ArgParser('x');
    expect(() => p.int('b', 1.5, '')).toThrow('int -b: default must be a safe integer (got 1.5)');
    expect(() => p.int('b', 1, '').int('b', 2, '')).toThrow('int -b: flag is already declared (got "b")');
    expect(() => new ArgParser('x').int('bad-key', 1, '')).toThrow(ArgumentError);
    expect(() => new ArgParser('x').choice('p', 'fp32' as 'fp16', ['fp16'], '')).toThrow(
      'choice -p: default must be one of fp16 (got "fp32")',
    );
    expect(() => new ArgParser('x').float('f', Number.NaN, '')).toThrow(ArgumentError);
    const args = makeParser().parse([]);
    expect(() => args.getInt('prec')).toThrow('-prec: is a choice flag, read it as choice (got ["int"])');
    expect(() => args.getBool('nope')).toThrow('-nope: is not a declared flag of tile_example_fmha_fwd');
  });
});

describe('ArgParser bounds and checks', () => {
  // A check in the style of the libraries': a typed ArgumentError that echoes the value.
  const evenLength = (text: string): void => {
    if (text.length % 2 !== 0) throw new ArgumentError('text', 'must have an even length', text);
  };
  const bounded = () =>
    new ArgParser('t')
      .int('n', 4, 'size', { min: 1 })
      .int('p', 0, 'a bit', { min: 0, max: 1 })
      .float('f', 0.5, 'fraction', { min: 0, max: 1 })
      .string('s', '', 'even text', evenLength);

  it('any int below the minimum (or above the maximum) is rejected naming the flag and the bound', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1000, max: 1000 }), fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }), (min, value) => {
        const p = new ArgParser('t').int('k', min, 'k', { min });
        if (value >= min) {
          expect(p.parse([`-k=${value}`]).get('k')).toBe(value);
          return;
        }
        const error = parseError(() => p.parse([`-k=${value}`]));
        expect([error.flag, error.message]).toEqual(['-k', `-k=${value}: must be at least ${min}`]);
      }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: -1000, max: 1000 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.integer({ min: -3000, max: 3000 }),
        (min, width, value) => {
          const max = min + width;
          const p = new ArgParser('t').int('k', min, 'k', { min, max });
          const inside = value >= min && value <= max;
          if (inside) expect(p.parse([`-k=${value}`]).get('k')).toBe(value);
          else
            expect(parseError(() => p.parse([`-k=${value}`])).message).toBe(
              `-k=${value}: must be at ${value < min ? `least ${min}` : `most ${max}`}`,
            );
        },
      ),
    );
  });

  it('golden: bounds and checks at parse time, one line naming the flag, the value shown once', () => {
    const p = bounded();
    const cases: [string, string][] = [
      ['-n=0', '-n=0: must be at least 1'],
      ['-n=-7', '-n=-7: must be at least 1'],
      ['-p=2', '-p=2: must be at most 1'],
      ['-f=1.5', '-f=1.5: must be at most 1'],
      ['-f=-0.1', '-f=-0.1: must be at least 0'],
      ['-s=abc', '-s=abc: must have an even length'],
    ];
    for (const [token, message] of cases) {
      const error = parseError(() => p.parse([token]));
      expect(error.message).toBe(message);
      expect(error.flag).toBe(token.slice(0, token.indexOf('=')));
    }
    expect(p.parse(['-n=1', '-p=1', '-f=1', '-s=ab']).toObject()).toEqual({ n: 1, p: 1, f: 1, s: 'ab' });
  });

  it("a check's own ArgParseError passes as is; an error that is not an ArgumentError is a bug and propagates", () => {
    const own = new ArgParser('t').string('x', '', 'x', (t) => {
      if (t === 'bad') throw new ArgParseError('-x', '-x=bad: see the manual');
    });
    expect(parseError(() => own.parse(['-x=bad'])).message).toBe('-x=bad: see the manual');
    const buggy = new ArgParser('t').string('x', '', 'x', (t) => {
      if (t === 'bad') throw new TypeError('oops');
    });
    expect(() => buggy.parse(['-x=bad'])).toThrow(TypeError);
  });

  it('restrict tightens a declared flag: bounds intersect (the larger minimum wins), checks chain', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -50, max: 50 }),
        fc.integer({ min: -50, max: 50 }),
        fc.integer({ min: -200, max: 200 }),
        (a, b, value) => {
          const start = Math.max(a, b, 0);
          const p = new ArgParser('t').int('k', start, 'k', { min: a }).restrict('k', { min: b });
          expect(p.flags()[0]!.min).toBe(Math.max(a, b));
          const ok = value >= Math.max(a, b);
          if (ok) expect(p.parse([`-k=${value}`]).get('k')).toBe(value);
          else expect(parseError(() => p.parse([`-k=${value}`])).flag).toBe('-k');
        },
      ),
    );
    const p = new ArgParser('t').string('s', '', 's', evenLength).restrict('s', {
      check: (t) => {
        if (t.includes('x')) throw new ArgumentError('s', 'must not hold x');
      },
    });
    expect(parseError(() => p.parse(['-s=abc'])).message).toBe('-s=abc: must have an even length');
    expect(parseError(() => p.parse(['-s=xy'])).message).toBe('-s=xy: must not hold x');
    expect(p.parse(['-s=ab']).get('s')).toBe('ab');
  });

  it('reject rules that do not fit the flag with ArgumentError (programming errors)', () => {
    expect(() => new ArgParser('t').int('n', 0, 'n', { min: 1 })).toThrow('int -n: default must be at least 1 (got 0)');
    expect(() => new ArgParser('t').int('n', 1, 'n', { min: 1.5 })).toThrow('int -n: bounds must be safe integers');
    expect(() => new ArgParser('t').float('f', 1, 'f', { max: Number.NaN })).toThrow('float -f: bounds must be finite');
    expect(() => new ArgParser('t').int('n', 3, 'n', { min: 5, max: 1 })).toThrow(ArgumentError);
    expect(() => new ArgParser('t').string('s', 'abc', 's', evenLength)).toThrow(/string -s: default must pass the flag's check/);
    expect(() => new ArgParser('t').string('s', '', 's').restrict('s', { min: 1 })).toThrow(
      'string -s: only int and float flags take bounds (got [1])',
    );
    expect(() => new ArgParser('t').int('n', 1, 'n').restrict('n', { check: evenLength })).toThrow(
      'int -n: only string flags take a check',
    );
    expect(() => new ArgParser('t').int('n', 1, 'n').restrict('n', { min: 2 })).toThrow('int -n: default must be at least 2 (got 1)');
    expect(() => (new ArgParser('t').int('n', 1, 'n') as ArgParser<{ n: number; m: number }>).restrict('m', { min: 0 })).toThrow(
      'restrict -m: flag is not declared',
    );
  });

  it('golden help: bounds in the type column', () => {
    expect(bounded().help().split('\n').slice(3)).toEqual([
      'flag  type        default  description',
      '----  ----------  -------  ------------------------------------------',
      '-n    int ≥ 1     4        size',
      '-p    int 0..1    0        a bit',
      '-f    float 0..1  0.5      fraction',
      '-s    string      ""       even text',
      '-?                         print this help and exit (also -h, --help)',
    ]);
    expect(parseError(() => bounded().parse(['-n'])).message).toBe('-n needs a value: write -n=<int ≥ 1> (default 4)');
  });
});

describe('runCli', () => {
  function capture() {
    const io = { out: '', err: '', code: -1 };
    return {
      io,
      sink: {
        stdout: (t: string) => void (io.out += t),
        stderr: (t: string) => void (io.err += t),
        exit: (c: number) => void (io.code = c),
      },
    };
  }

  it('runs main with typed args and reports its exit code', async () => {
    const { io, sink } = capture();
    let seen = 0;
    const code = await runCli(
      makeParser(),
      ['-b=7'],
      (args) => {
        seen = args.get('b');
        return 3;
      },
      sink,
    );
    expect([code, io.code, seen, io.out, io.err]).toEqual([3, 3, 7, '', '']);
    expect(await runCli(makeParser(), [], async () => undefined, sink)).toBe(0);
  });

  it('prints help and exits 0 on -? without running main', async () => {
    const { io, sink } = capture();
    let ran = false;
    expect(await runCli(makeParser(), ['-?'], () => void (ran = true), sink)).toBe(0);
    expect(ran).toBe(false);
    expect(io.out).toBe(`${makeParser().help()}\n`);
    expect(io.code).toBe(0);
  });

  it('prints the one-line error and exits 2 on ArgParseError, from parse or from main', async () => {
    const { io, sink } = capture();
    expect(await runCli(makeParser(), ['-b=abc'], () => 0, sink)).toBe(2);
    expect(io.err).toBe('error: -b=abc: expected an integer\n');
    expect(io.code).toBe(2);
    const second = capture();
    const code = await runCli(
      makeParser(),
      [],
      () => {
        throw new ArgParseError('-h', '-h=8: must be a multiple of -h_k=3');
      },
      second.sink,
    );
    expect([code, second.io.err]).toEqual([2, 'error: -h=8: must be a multiple of -h_k=3\n']);
  });

  it('lets other errors (bugs) propagate, without reporting an exit code', async () => {
    const { io, sink } = capture();
    await expect(
      runCli(
        makeParser(),
        [],
        () => {
          throw new RangeError('boom');
        },
        sink,
      ),
    ).rejects.toThrow('boom');
    await expect(runCli(makeParser(), [], () => Promise.reject(new Error('async boom')), sink)).rejects.toThrow('async boom');
    expect([io.err, io.code]).toEqual(['', -1]);
  });

  it('every typed error from main is a user error: one line on stderr, exit 2 (multi-line messages joined)', async () => {
    class CompileFailed extends TilekitError {
      constructor() {
        super('test/compile', 'nvcc failed to compile kernel k for sm_90a\n  k.cu:3: error: bad\n      3 | int x = ;\n  source: /tmp/k.cu');
      }
    }
    for (const [thrown, line] of [
      [new CompileFailed(), 'error: nvcc failed to compile kernel k for sm_90a; k.cu:3: error: bad; 3 | int x = ;; source: /tmp/k.cu'],
      [new ArgumentError('fill spec', 'expected uf', 'zz'), 'error: fill spec: expected uf (got "zz")'],
    ] as const) {
      const { io, sink } = capture();
      expect(await runCli(makeParser(), [], async () => Promise.reject(thrown), sink)).toBe(2);
      expect([io.err, io.code, io.out]).toEqual([`${line}\n`, 2, '']);
    }
  });

  it('node:util parseArgs usage errors are user errors too', async () => {
    const { io, sink } = capture();
    expect(await runCli(makeParser(), [], () => void parseArgs({ args: ['--bogus'], options: {} }), sink)).toBe(2);
    expect(io.err).toMatch(/^error: Unknown option '--bogus'.*\n$/);
    expect(io.err.trimEnd()).not.toContain('\n');
  });
});
