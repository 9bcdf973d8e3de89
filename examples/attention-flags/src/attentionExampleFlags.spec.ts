import { ArgParseError, ArgParser } from '@tilekit/host';
import { describe, expect, it } from 'vitest';
import { attentionShapeFromArgs, withAttentionFlags } from './attentionExampleFlags.ts';

const parser = withAttentionFlags(new ArgParser('probe'), {
  seqlen: '64',
  seqlenExample: '1,17',
  headDims: '64, 128',
  headDimV: '= d',
  inputTensors: 'Q/K/V',
  outputTensors: 'O',
  precTensors: 'Q, K, V and O',
});
const shape = (argv: string[]) => attentionShapeFromArgs(parser.parse(argv));

describe('the shared attention example flags', () => {
  it('batch mode: one length each, defaults left out, layouts from -iperm/-operm', () => {
    expect(shape(['-b=3', '-h=4', '-h_k=2', '-s=100', '-s_k=300', '-iperm=0'])).toEqual({
      dtype: 'fp16',
      nheadQ: 4,
      nheadK: 2,
      hdimQ: 128,
      inputLayout: 'bshd',
      outputLayout: 'bhsd',
      mask: '0',
      batch: 3,
      seqlenQ: 100,
      seqlenK: 300,
    });
  });

  it('group mode: the starts are prefix sums, a single length repeats over -b', () => {
    const g = shape(['-mode=1', '-s=1,17,0', '-s_k=5']);
    expect(g).toMatchObject({ batch: 3, seqstartQ: [0, 1, 18, 18], seqstartK: [0, 5, 10, 15] });
  });

  it('lengths that make no shape: ArgParseError naming the flag', () => {
    expect(() => shape(['-s=1,2'])).toThrow(ArgParseError);
    expect(() => shape(['-mode=1', '-b=2', '-s=1,2,3'])).toThrow(/-b=2/);
    expect(() => shape(['-mode=1', '-s=1,2', '-s_k=1,2,3'])).toThrow(/-s_k/);
  });
});
