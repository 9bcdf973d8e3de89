// fast-check runs 100 cases per property by default; FC_NUM_RUNS raises it for long runs.
import fc from 'fast-check';

fc.configureGlobal({ numRuns: Number(process.env['FC_NUM_RUNS'] ?? 100) });
