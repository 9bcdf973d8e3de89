import { describe, expect, it } from 'vitest';
import { ArgParseError, ArgParser, runCli } from '../argParser.ts';
import { badFlagTokens } from './badFlagTokens.ts';

const parser = new ArgParser('t')
  .int('h', 8, 'heads', { min: 1 })
  .int('p', 0, 'bit', { min: 0, max: 1 })
  .float('f', 0.5, 'fraction', { max: 1 })
  .bool('v', true, 'validate')
  .choice('prec', 'fp16', ['fp16', 'bf16'], 'type')
  .string('s', '', 'free text');

describe('badFlagTokens', () => {
  it('every token fails to parse with an ArgParseError naming its flag; runCli exits 2 without running main', async () => {
    const tokens = badFlagTokens(parser);
    expect(tokens.map((t) => t.token)).toEqual([
      '-no_such_flag=1',
      '-h=abc',
      '-h=1.5',
      '-h=0',
      '-p',
      '-p=abc',
      '-p=1.5',
      '-p=-1',
      '-p=2',
      '-f',
      '-f=abc',
      '-f=1e999',
      '-f=2',
      '-v',
      '-v=maybe',
      '-prec',
      '-prec=fp16bf16_not_a_choice',
      '-s',
    ]);
    for (const { token, flag } of tokens) {
      expect(() => parser.parse([token]), token).toThrow(expect.objectContaining({ flag }));
      expect(() => parser.parse([token])).toThrow(ArgParseError);
      let err = '';
      const code = await runCli(parser, [token], () => expect.unreachable(token), { stderr: (t) => (err += t), exit: () => undefined });
      expect([code, err.split('\n').length], token).toEqual([2, 2]);
    }
  });
});
