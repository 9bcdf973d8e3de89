// The kernels launched since the last completed synchronize, so that a device fault (which the
// driver reports at the next synchronizing call, not at the launch) can name its suspects.
// Process-wide, like the CUDA context whose sticky error it explains. Also the opt-in launch log.
// A launch into a stream under CUDA graph capture runs nothing: it is collected for the graph
// instead, and each replay of the graph records its kernels (CudaGraph).
import { appendFileSync } from 'node:fs';

const KEPT = 16;
const recent: string[] = [];
let unsettled = 0;

interface Collector {
  readonly stream: object;
  readonly kernels: string[];
}
const collectors: Collector[] = [];

/** Called by `Kernel.launch` after the driver accepted the launch (on `stream`, undefined: the legacy stream). */
export function recordLaunch(kernel: string, stream?: object): void {
  recordLaunches([kernel], stream);
}

/**
 * Records launches of `kernels`, in order, that the driver accepted on `stream` (one graph replay:
 * one log write, however many kernels). Launches on a stream that `collectLaunches` is
 * collecting are only appended to that collection.
 */
export function recordLaunches(kernels: readonly string[], stream?: object): void {
  const collector = stream === undefined || collectors.length === 0 ? undefined : collectors.find((c) => c.stream === stream);
  if (collector !== undefined) {
    for (const kernel of kernels) collector.kernels.push(kernel);
    return;
  }
  appendLaunchLog(kernels);
  recent.push(...(kernels.length > KEPT ? kernels.slice(-KEPT) : kernels));
  if (recent.length > KEPT) recent.splice(0, recent.length - KEPT);
  unsettled += kernels.length;
}

/** Called after a synchronize completed: every earlier launch finished without a fault. */
export function launchesSettled(): void {
  recent.length = 0;
  unsettled = 0;
}

/**
 * From now until the returned stop function is called, launches recorded on `stream` (a stream
 * under graph capture) are appended to `kernels` instead of being journaled or logged.
 */
export function collectLaunches(stream: object, kernels: string[]): () => void {
  const collector: Collector = { stream, kernels };
  collectors.push(collector);
  return () => {
    const at = collectors.indexOf(collector);
    if (at >= 0) collectors.splice(at, 1);
  };
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
 * launches append exactly n lines; a launch rejected before the driver appends none; a launch
 * captured into a CUDA graph appends none, and each replay of the graph appends one line per
 * captured kernel.
 */
function appendLaunchLog(kernels: readonly string[]): void {
  const file = process.env['TILEKIT_LAUNCH_LOG'];
  if (file && kernels.length > 0) appendFileSync(file, kernels.map((kernel) => `${kernel}\n`).join(''));
}
