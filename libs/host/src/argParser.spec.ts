import fc from 'fast-check';
import { ArgumentError, TilekitError } from '@tilekit/numeric';
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
    for (const [text, value] of [['1', true], ['0', false], ['true', true], ['false', false], ['TRUE', true]] as const) {
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
    fc.assert(fc.property(fc.array(fc.string({ maxLength: 12 }), { maxLength: 6 }), (argv) => {
      try {
        makeParser().parse(argv);
      } catch (error) {
        expect(error).toBeInstanceOf(ArgParseError);
        expect((error as Error).message).not.toContain('\n');
      }
    }));
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
    expect(() => new ArgParser('x').choice('p', 'fp32' as 'fp16', ['fp16'], '')).toThrow('choice -p: default must be one of fp16 (got "fp32")');
    expect(() => new ArgParser('x').float('f', Number.NaN, '')).toThrow(ArgumentError);
    const args = makeParser().parse([]);
    expect(() => args.getInt('prec')).toThrow('-prec: is a choice flag, read it as choice (got ["int"])');
    expect(() => args.getBool('nope')).toThrow('-nope: is not a declared flag of tile_example_fmha_fwd');
  });
});

describe('runCli', () => {
  function capture() {
    const io = { out: '', err: '', code: -1 };
    return {
      io,
      sink: { stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t), exit: (c: number) => void (io.code = c) },
    };
  }

  it('runs main with typed args and reports its exit code', async () => {
    const { io, sink } = capture();
    let seen = 0;
    const code = await runCli(makeParser(), ['-b=7'], (args) => {
      seen = args.get('b');
      return 3;
    }, sink);
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
    expect(io.err).toBe('-b=abc: expected an integer\n');
    expect(io.code).toBe(2);
    const second = capture();
    const code = await runCli(makeParser(), [], () => {
      throw new ArgParseError('-h', '-h=8: must be a multiple of -h_k=3');
    }, second.sink);
    expect([code, second.io.err]).toEqual([2, '-h=8: must be a multiple of -h_k=3\n']);
  });

  it('lets other errors propagate', async () => {
    const { sink } = capture();
    await expect(runCli(makeParser(), [], () => {
      throw new RangeError('boom');
    }, sink)).rejects.toThrow('boom');
  });
});
