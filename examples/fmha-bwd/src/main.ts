// Example: attention backward generated from @tilekit/fmha's pipeline, compiled, launched, validated and timed.
//   npx tsx --conditions=@tilekit/source examples/fmha-bwd/src/main.ts -b=2 -h=8 -s=1024 -d=128 -mask=t -deterministic=1
//   ... -mode=1 -s=1,17,259,0 -s_k=17,1,300,5 -h_k=2       ... -? lists every flag
import { runCli } from '@tilekit/host';
import { fmhaBwdParser, runFmhaBwdExample } from './fmhaBwdExample.ts';

await runCli(fmhaBwdParser, process.argv.slice(2), (args) => runFmhaBwdExample(args));
