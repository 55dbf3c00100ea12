// A process that runs one program in an embedded sandbox and prints what the program saw of its
// descriptors, for the test that starts it holding a descriptor a sandbox must not pass on (as a
// shell, a CI runner or a scheduler may leave one open for its children).
// usage: fd-probe.ts FD auto|coreutils prepare|no-prepare
import { EmbeddedSandbox } from "../../pipeline/sandbox/embedded.js";
import { testConfig } from "../sandbox/helpers.js";

const [fd, launcher, prepare] = process.argv.slice(2);
const sandbox = new EmbeddedSandbox(testConfig({ workers: 1, uid_base: 64900 }), {
  launcher: launcher === "coreutils" ? "coreutils" : "auto",
  prepare: prepare === "prepare",
});
const code = `ls /proc/self/fd | sort -n | tr '\\n' ' '; echo; head -c 64 /proc/self/fd/${fd} 2>&1 || true`;
const runs = [];
// twice: with a sandbox built ahead, the second run is the one it prepared
for (let i = 0; i < 2; i++) runs.push(await sandbox.run({ language: "bash", code }));
await sandbox.close();
process.stdout.write(JSON.stringify(runs.map((run) => run.run_result?.stdout ?? run)));
