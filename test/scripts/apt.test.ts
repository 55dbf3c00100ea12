// scripts/lib/apt.sh, as scripts/install.sh calls it with scripts/apt-packages.txt: a package of
// scripts/debian/ is built and installed in the same apt-get call as the Debian packages that need
// it (jest's node-types-node stand-in), and nothing is done for what is already installed. apt-get,
// dpkg-query and sudo are stand-ins on PATH that record their calls; dpkg-deb is Debian's own.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const repo = new URL("../..", import.meta.url).pathname;
const bin = mkdtempSync(join(tmpdir(), "cf-apt-test-"));
afterAll(() => rmSync(bin, { recursive: true, force: true }));

const stub = (name: string, body: string) => {
  writeFileSync(join(bin, name), `#!/bin/bash\n${body}\n`);
  chmodSync(join(bin, name), 0o755);
};
// installed: the names in $INSTALLED
stub(
  "dpkg-query",
  `name=\${@: -1}; for p in $INSTALLED; do [ "$p" = "$name" ] && { echo -n "install ok installed"; exit 0; }; done; exit 1`,
);
// each call on a line; a .deb is described by its control fields while it still exists
stub(
  "apt-get",
  `echo "apt-get $*" >> "$LOG"
for a in "$@"; do case $a in *.deb) echo "deb $a $(dpkg-deb -f "$a" Package Provides | tr '\\n' ' ')" >> "$LOG";; esac; done
[ "$1" != install ] || exit \${APT_STATUS:-0}`,
);
stub("sudo", `exec "$@"`);

const listed = readFileSync(join(repo, "scripts/apt-packages.txt"), "utf8")
  .split("\n")
  .map((line) => line.replace(/#.*/, "").trim())
  .filter((line) => line !== "");

function install(installed: string[], aptStatus = 0): { status: number; log: string[] } {
  const log = join(bin, `log-${Math.random()}`);
  writeFileSync(log, "");
  const result = spawnSync(
    "/bin/bash",
    [
      "-c",
      'set -euo pipefail; source scripts/lib/apt.sh; apt_install_missing install "$@"',
      "bash",
      ...listed,
    ],
    {
      cwd: repo,
      env: {
        PATH: `${bin}:/usr/bin:/bin`,
        LOG: log,
        INSTALLED: installed.join(" "),
        APT_STATUS: String(aptStatus),
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  return { status: result.status ?? -1, log: readFileSync(log, "utf8").split("\n").filter(Boolean) };
}

describe("apt_install_missing with the repository's packages", () => {
  it("builds jest's node-types-node stand-in and installs it with jest in one apt-get call", () => {
    const { status, log } = install([]);
    expect(status).toBe(0);
    const installs = log.filter((line) => line.startsWith("apt-get install"));
    expect(installs).toHaveLength(1);
    const args = installs[0]!.split(" ");
    expect(args).toEqual(expect.arrayContaining(["jest", "node-babel7", "node-lodash", "python3"]));
    const deb = log.find((line) => line.startsWith("deb "))!;
    expect(deb).toMatch(/Package: codefeedback-node-types Provides: node-types-node \(= [\d.]+\)/);
    const debPath = deb.split(" ")[1]!;
    expect(args).toContain(debPath);
    // the directory of scripts/debian/ is never handed to apt as a package name
    expect(installs[0]).not.toContain("scripts/debian");
    expect(existsSync(dirname(debPath))).toBe(false);
  });

  it("with the stand-in installed, installs only what is missing, without building it again", () => {
    const { status, log } = install(listed.filter((p) => p !== "jest").concat("codefeedback-node-types"));
    expect(status).toBe(0);
    expect(log.filter((line) => line.startsWith("deb "))).toEqual([]);
    expect(log.filter((line) => line.startsWith("apt-get install"))).toEqual([
      "apt-get install -y -qq --no-install-recommends jest",
    ]);
  });

  it("does nothing when everything is installed", () => {
    const { status, log } = install(listed.filter((p) => !p.includes("/")).concat("codefeedback-node-types"));
    expect(status).toBe(0);
    expect(log).toEqual([]);
  });

  it("an apt-get that fails fails the install, and leaves no build dir behind", () => {
    const { status, log } = install([], 100);
    expect(status).toBe(100);
    const deb = log.find((line) => line.startsWith("deb "))!.split(" ")[1]!;
    expect(existsSync(dirname(deb))).toBe(false);
  });
});

it("the stand-in's control file is a valid package description", () => {
  const dir = join(repo, "scripts/debian/codefeedback-node-types");
  const control = readFileSync(join(dir, "DEBIAN/control"), "utf8");
  expect(control).toMatch(/^Package: codefeedback-node-types$/m);
  expect(control).toMatch(/^Provides: node-types-node \(= [\d.]+\)$/m);
  const out = mkdtempSync(join(tmpdir(), "cf-apt-deb-"));
  try {
    execFileSync("/usr/bin/dpkg-deb", ["--root-owner-group", "--build", dir, join(out, "x.deb")], {
      stdio: "pipe",
    });
    const fields = execFileSync("/usr/bin/dpkg-deb", ["-f", join(out, "x.deb"), "Architecture", "Version"], {
      encoding: "utf8",
    });
    expect(fields).toMatch(/^Architecture: all\nVersion: [\d.]+\n$/);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
