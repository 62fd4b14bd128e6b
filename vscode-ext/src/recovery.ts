// When a sidecar stops without being asked to (a crash, `kill -9`, a harness that stopped the
// server the extension attached to): how long to wait before each try, whether to start a
// sidecar of our own or wait for the harness's to come back, when to give up, and the one
// message then. Pure: no `vscode` import.

/** The wait before each try, doubling: six tries over about 19 s. */
export const RECOVERY_DELAYS_MS: readonly number[] = [300, 600, 1200, 2400, 4800, 9600];

/** A sidecar the extension attached to was started by someone else (a harness), who may be
 * restarting it: for this long only re-attach; after it, start one of our own. */
export const REATTACH_GRACE_MS = 3000;

/** More unasked stops than this within the window is a crash loop: give up at once. */
export const MAX_STOPS = 5;
export const STOP_WINDOW_MS = 3 * 60_000;

/** The wait before try `attempt` (0-based), or undefined when it is time to give up. */
export function recoveryDelay(attempt: number): number | undefined {
  return RECOVERY_DELAYS_MS[attempt];
}

/** May this try start a sidecar of the extension's own, `elapsedMs` after the stop? */
export function mayStartOwn(wasAttached: boolean, elapsedMs: number): boolean {
  return !wasAttached || elapsedMs >= REATTACH_GRACE_MS;
}

/** Records an unasked stop at `now`; true when they now come too often to keep trying. */
export function crashLoop(stops: number[], now: number): boolean {
  stops.push(now);
  while (stops.length > 0 && now - stops[0] > STOP_WINDOW_MS) stops.shift();
  return stops.length > MAX_STOPS;
}

/** The one message when recovery gave up: what happened, why, and the command that retries. */
export function gaveUpMessage(folder: string, tries: number, reason: string | undefined, loop: boolean): string {
  const what = loop
    ? `the fresh-ls server for ${folder} stopped ${MAX_STOPS + 1} times within ${STOP_WINDOW_MS / 60_000} minutes`
    : `the fresh-ls server for ${folder} stopped and did not come back after ${tries} tries`;
  return `fresh-ls: ${what}${reason ? ` (last: ${reason})` : ""}. Run “fresh-ls: Restart Server” to try again; the “fresh-ls” output has the details.`;
}
