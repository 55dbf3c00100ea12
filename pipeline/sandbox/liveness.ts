// Whether the sandbox that left something on this machine (a host area, a cgroup, a uid claim) is
// still alive: all of them are named after their owner's pid, and a sandbox killed with -9 cannot
// clean up after itself, so the next one to start does (pipeline/pid.ts).

export { processAlive } from "../pid.js";
