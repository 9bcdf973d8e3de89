// The kernels launched since the last completed synchronize, so that a device fault (which the
// driver reports at the next synchronizing call, not at the launch) can name its suspects.
// Process-wide, like the CUDA context whose sticky error it explains.

const KEPT = 16;
const recent: string[] = [];
let unsettled = 0;

/** Called by `Kernel.launch` after the driver accepted the launch. */
export function recordLaunch(kernel: string): void {
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
