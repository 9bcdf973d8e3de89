// Example: round-trips seeded values through every dtype and prints the bits and values read back.
//   npm run example -- -v=1 -n=8 -init=uf:-500,500
import { ArgParseError, ArgParser, fillValues, formatTable, parseFillSpec, runCli } from '@tilekit/host';
import { dtypeNames, type DTypeName } from '@tilekit/numeric';
import { roundTripTable, validateRoundTrip } from './dtypeRoundTrip.ts';

/** The dtypes `-dtypes` names (`all`, or a comma-separated list of dtype names). */
function dtypesOf(text: string): DTypeName[] {
  if (text === 'all') return [...dtypeNames];
  return text.split(',').map((name) => {
    if (!(dtypeNames as readonly string[]).includes(name))
      throw new ArgParseError('-dtypes', `-dtypes=${text}: unknown dtype ${JSON.stringify(name)} (valid: all, ${dtypeNames.join(', ')})`);
    return name as DTypeName;
  });
}

const parser = new ArgParser('example_dtypes', 'round-trips seeded values through every tilekit dtype')
  .int('n', 8, 'how many values', { min: 1 })
  .string(
    'init',
    'uf:-500,500',
    'fill of the inputs (uf, ui, nf, ni, tf, constant:v; with :a,b ranges)',
    (text) => void parseFillSpec(text, '-init'),
  )
  .int('seed', 11939, 'seed of the fill')
  .string('dtypes', 'all', 'comma-separated dtypes to show, or all', (text) => void dtypesOf(text))
  .bool('v', true, 'validate each round trip against the rounding rules');

await runCli(parser, process.argv.slice(2), (args) => {
  const names = dtypesOf(args.get('dtypes'));
  const inputs = [...fillValues(args.get('init'), args.get('n'), args.get('seed'))];
  const rows = roundTripTable(inputs, names);
  const columns = ['input', ...names];
  const cells = rows.map((row) => [
    row.input.toPrecision(7),
    ...names.map((name) => {
      const cell = row.cells.get(name);
      return cell ? `${cell.bits} ${Number(cell.value.toPrecision(6))}` : '';
    }),
  ]);
  console.log(`example_dtypes: ${inputs.length} values from -init=${args.get('init')} -seed=${args.get('seed')}`);
  console.log(formatTable(columns, cells));
  if (!args.get('v')) return 0;
  const problems = inputs.flatMap((x) => names.map((name) => validateRoundTrip(name, x)).filter((p) => p !== undefined));
  console.log(problems.length === 0 ? `valid: yes (${inputs.length * names.length} round trips)` : `valid: no\n${problems.join('\n')}`);
  return problems.length === 0 ? 0 : 1;
});
