// The /etc a sandbox sees: a copy, made once per sandbox instance, of the few /etc entries toolchains
// read, plus passwd/group/hosts/hostname/resolv.conf we write ourselves. Mounting one prepared dir
// costs one bind mount per run instead of thirty, and nothing else of the host's /etc (keys, tokens,
// npmrc, pip.conf, environment, ssh) is ever visible.
import { cp, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** /etc entries toolchains read (dynamic linker, alternatives links, TLS roots, runtime configs). */
const ETC_WHITELIST = [
  "alternatives",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "localtime",
  "timezone",
  "ssl",
  "mime.types",
  "nsswitch.conf",
  "host.conf",
  "gai.conf",
  "protocols",
  "services",
  "os-release",
  "debian_version",
  "terminfo",
  "java-17-openjdk",
  "java-21-openjdk",
  "mono",
  "R",
  "php",
  "perl",
  "python3",
  "python3.11",
  "fonts",
  "papersize",
  "libpaper.d",
  "ruby",
  // where racket finds its installed collections, and LDC its D runtime
  "racket",
  "ldc2.conf",
];

/** Never copied even inside a whitelisted entry. */
const ETC_NEVER = new Set(["/etc/ssl/private"]);

/** Builds the view in `dir` (which must not exist yet) for untrusted code running as `uids`. */
export async function buildEtcView(dir: string, uids: readonly number[]): Promise<void> {
  await mkdir(dir, { mode: 0o755 });
  for (const name of ETC_WHITELIST) {
    await cp(`/etc/${name}`, join(dir, name), {
      recursive: true,
      // links stay links: /etc/alternatives is nothing but links into /usr
      verbatimSymlinks: true,
      preserveTimestamps: true,
      filter: (source) => !ETC_NEVER.has(source),
    }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
    });
  }
  const users = uids.map((uid) => `sandbox:x:${uid}:${uid}:sandbox:/tmp:/usr/sbin/nologin\n`).join("");
  const groups = uids.map((uid) => `sandbox:x:${uid}:\n`).join("");
  const written = {
    passwd: `root:x:0:0:root:/root:/usr/sbin/nologin\n${users}nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
    group: `root:x:0:\n${groups}nogroup:x:65534:\n`,
    hosts: "127.0.0.1 localhost sandbox\n::1 localhost ip6-localhost ip6-loopback\n",
    hostname: "sandbox\n",
    "resolv.conf": "",
  };
  for (const [name, content] of Object.entries(written)) {
    await writeFile(join(dir, name), content, { mode: 0o644 });
  }
}
