// Example: the whole DSA path (indexer → top-k → sparse MLA attention) generated, compiled, launched as one step,
// validated stage by stage and timed.
//   npx tsx --conditions=@tilekit/source examples/dsa/src/main.ts -mode=decode -b=2 -next_n=1 -L=4096 -topk=2048 -h_q=128 -v=1
//   ... -mode=prefill -s=32 -L=4096        ... -?  lists every flag
import { runCli } from '@tilekit/host';
import { runDsaExample } from './dsaExample.ts';
import { dsaParser } from './dsaFlags.ts';

await runCli(dsaParser, process.argv.slice(2), (args) => runDsaExample(args));
