// Prints Sparge's error/sparsity curve from the CPU references (no GPU): structured inputs, the block map
// at each topk / cdfthreshd, the block-masked attention's relative L1 against dense attention. The
// table in kernels/sparge/README.md comes from it. It takes no flags (-? prints that; anything else is exit 2).
//   npx tsx --conditions=@tilekit/source tools/bench/src/spargeCurveCli.ts
import { ArgParser, runCli } from '@tilekit/host';
import { spargeErrorSparsityCurve, spargeSyntheticInputs, type SpargeCurvePoint } from '@tilekit/kernel-sparge';

const parser = new ArgParser(
  'spargeCurveCli',
  "Sparge's error/sparsity curve from the CPU references (b1 h2 s2048 d128, 128x128 blocks); takes no flags",
);

const table = (name: string, points: readonly SpargeCurvePoint[]): string =>
  [
    `| ${name} | sparsity | relative L1 |`,
    '|---:|---:|---:|',
    ...points.map((p) => `| ${p.value} | ${p.achievedSparsity.toFixed(3)} | ${p.relativeL1 === 0 ? '0' : p.relativeL1.toExponential(2)} |`),
  ].join('\n');

await runCli(parser, process.argv.slice(2), () => {
  const inputs = spargeSyntheticInputs({ batch: 1, nhead: 2, seqlenQ: 2048, seqlenK: 2048, headDim: 128 }, { seed: 1 });
  const blocks = { blockQ: 128, blockK: 128 };
  console.log(table('topk', spargeErrorSparsityCurve(inputs, [0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1], blocks)));
  console.log();
  console.log(table('cdfthreshd', spargeErrorSparsityCurve(inputs, [0.9, 0.95, 0.99], blocks, 'cdf')));
});
