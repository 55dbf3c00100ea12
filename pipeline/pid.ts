// Whether a pid on this machine names a live process: what a process leaves behind to say it is at
// work (a stage's lock and running manifest, the sandbox's host areas, cgroups and uid claims) is
// named after its pid, and a process killed with -9 cannot take it away itself.

/** Whether `pid` names a live process (one we may not signal still counts). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
