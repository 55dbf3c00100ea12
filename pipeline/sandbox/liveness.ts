// Whether the sandbox that left something on this machine (a host area, a cgroup, a uid claim) is
// still alive: all of them are named after their owner's pid, and a sandbox killed with -9 cannot
// clean up after itself, so the next one to start does.

/** Whether `pid` names a live process (one we may not signal still counts). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
