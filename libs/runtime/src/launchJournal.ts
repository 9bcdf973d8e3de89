// The kernels launched since the last completed synchronize, so that a device fault (which the
// driver reports at the next synchronizing call, not at the launch) can name its suspects.
// Process-wide, like the CUDA context whose sticky error it explains. Also the opt-in launch log.
import { appendFileSync } from 'node:fs';

const KEPT = 16;
const recent: string[] = [];
let unsettled = 0;

/** Called by `Kernel.launch` after the driver accepted the launch. */
export function recordLaunch(kernel: string): void {
  appendLaunchLog(kernel);
  recent.push(kernel);
  if (recent.length > KEPT) recent.shift();
  unsettled += 1;
}

/** Called after a synchronize completed: every earlier launch finished without a fault. */
export function launchesSettled(): void {
  recent.length = 0;
  unsettled = 0;
}

/** The last (at most 16) kernels launched since the last completed synchronize, oldest first, and how many there were. */
export function unsettledLaunches(): { readonly kernels: readonly string[]; readonly count: number } {
  return { kernels: [...recent], count: unsettled };
}

/**
 * The opt-in launch log: with `TILEKIT_LAUNCH_LOG=<file>` set, every launch the driver accepted
 * appends its kernel name and a newline to that file, so that a tool running the GPU tests under
 * compute-sanitizer (tools/device/run-sanitize.mjs) can say which kernels it covered and how often.
 * Unset or empty: nothing but one environment lookup per launch. Postcondition (tested): n accepted
 * launches append exactly n lines; a launch rejected before the driver appends none.
 */
function appendLaunchLog(kernel: string): void {
  const file = process.env['TILEKIT_LAUNCH_LOG'];
  if (file) appendFileSync(file, `${kernel}\n`);
}
