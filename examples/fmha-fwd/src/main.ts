// Example: attention forward generated from @tilekit/fmha's pipeline, compiled, launched, validated and timed.
//   npx tsx --conditions=@tilekit/source examples/fmha-fwd/src/main.ts -b=2 -h=16 -s=4096 -d=128 -mask=b -prec=bf16
//   ... -mode=1 -s=1,17,259,4097 -h_k=2 -lse=1       ... -s=16 -s_k=32768 -num_splits=0       ... -? lists every flag
import { runCli } from '@tilekit/host';
import { fmhaFwdParser, runFmhaFwdExample } from './fmhaFwdExample.ts';

await runCli(fmhaFwdParser, process.argv.slice(2), (args) => runFmhaFwdExample(args));
