// A small seccomp filter (classic BPF, for bwrap's --seccomp) refusing the system calls no test
// program needs and sandbox escapes love: ptrace and cross-process memory access, keyrings, bpf, perf,
// userfaultfd, io_uring, module and kexec loading, mounts, new namespaces (clone3 answers ENOSYS so
// libcs fall back to clone, whose flags we can inspect), and socket families a network namespace does
// not contain (AF_VSOCK would reach the hypervisor). x86_64 only; elsewhere none (docs/sandbox.md).
import { arch } from "node:os";

const AUDIT_ARCH_X86_64 = 0xc000003e;
const X32_SYSCALL_BIT = 0x40000000;
const EPERM = 1;
const ENOSYS = 38;
const EAFNOSUPPORT = 97;

/** AF_UNIX, AF_INET, AF_INET6, AF_NETLINK: the socket families an empty network namespace confines */
export const ALLOWED_SOCKET_FAMILIES = [1, 2, 10, 16];

const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;

const RET_ALLOW = 0x7fff0000;
const RET_KILL_PROCESS = 0x80000000;
const retErrno = (errno: number) => 0x00050000 | errno;

/** offsets in struct seccomp_data */
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;

/** CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET */
const CLONE_NAMESPACE_FLAGS = 0x7e020000;

export const X86_64_SYSCALLS = {
  clone: 56,
  clone3: 435,
  socket: 41,
  denied: {
    // so a run cannot take over the sandbox's own init or wrappers
    ptrace: 101,
    process_vm_readv: 310,
    process_vm_writev: 311,
    // another process's descriptors and memory advice: cross-process access like ptrace
    pidfd_getfd: 438,
    process_madvise: 440,
    kcmp: 312,
    add_key: 248,
    request_key: 249,
    keyctl: 250,
    bpf: 321,
    perf_event_open: 298,
    userfaultfd: 323,
    kexec_load: 246,
    kexec_file_load: 320,
    init_module: 175,
    finit_module: 313,
    delete_module: 176,
    mount: 165,
    umount2: 166,
    pivot_root: 155,
    swapon: 167,
    swapoff: 168,
    reboot: 169,
    setns: 308,
    unshare: 272,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    acct: 163,
    quotactl: 179,
    syslog: 103,
    ioperm: 173,
    iopl: 172,
    open_by_handle_at: 304,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
  } as Record<string, number>,
};

/** Instructions that send a syscall number in `entries` (sorted) to its target, and any other to "allow". */
function searchTree(entries: { nr: number; target: string }[], labels: { next: number }): Instruction[] {
  if (entries.length <= 3) {
    return [
      ...entries.map((entry) => ({ code: BPF_JEQ_K, jt: entry.target, jf: 0, k: entry.nr })),
      { code: BPF_JEQ_K, jt: "allow", jf: "allow", k: 0 },
    ];
  }
  const middle = Math.floor(entries.length / 2);
  const upper = `upper-${labels.next++}`;
  const lower = searchTree(entries.slice(0, middle), labels);
  const higher = searchTree(entries.slice(middle), labels);
  // the first instruction of a subtree never carries a label of its own, so it can take this one
  higher[0] = { ...higher[0]!, label: upper };
  return [{ code: BPF_JGE_K, jt: upper, jf: 0, k: entries[middle]!.nr }, ...lower, ...higher];
}

interface Instruction {
  code: number;
  jt: number | string;
  jf: number | string;
  k: number;
  label?: string;
}

function assemble(program: Instruction[]): Buffer {
  const at = new Map<string, number>();
  program.forEach((ins, i) => {
    if (ins.label) at.set(ins.label, i);
  });
  const out = Buffer.alloc(program.length * 8);
  program.forEach((ins, i) => {
    // Jump offsets count instructions after this one.
    const offset = (target: number | string) =>
      typeof target === "number" ? target : at.get(target)! - i - 1;
    out.writeUInt16LE(ins.code, i * 8);
    out.writeUInt8(offset(ins.jt), i * 8 + 2);
    out.writeUInt8(offset(ins.jf), i * 8 + 3);
    out.writeUInt32LE(ins.k >>> 0, i * 8 + 4);
  });
  return out;
}

let cached: Buffer | undefined;

/** The compiled filter for this machine's architecture, or null where we have no syscall table. */
export function sandboxSeccompFilter(): Buffer | null {
  if (arch() !== "x64") return null;
  if (cached) return cached;
  const table = X86_64_SYSCALLS;
  const special: Record<number, string> = {
    [table.clone]: "clone",
    [table.clone3]: "nosys",
    [table.socket]: "socket",
  };
  const entries = [
    ...Object.values(table.denied).map((nr) => ({ nr, target: "deny" })),
    ...Object.entries(special).map(([nr, target]) => ({ nr: Number(nr), target })),
  ].sort((a, b) => a.nr - b.nr);
  const program: Instruction[] = [
    { code: BPF_LD_W_ABS, jt: 0, jf: 0, k: ARCH },
    { code: BPF_JEQ_K, jt: 1, jf: 0, k: AUDIT_ARCH_X86_64 },
    // i386 (int 0x80) calls use other numbers and would slip past the table
    { code: BPF_RET_K, jt: 0, jf: 0, k: RET_KILL_PROCESS },
    { code: BPF_LD_W_ABS, jt: 0, jf: 0, k: NR },
    { code: BPF_JGE_K, jt: "deny", jf: 0, k: X32_SYSCALL_BIT },
    // a binary search, so an allowed call (the common case) costs a handful of comparisons
    ...searchTree(entries, { next: 0 }),
    // classic BPF only jumps forward: every target sits below every jump to it
    { code: BPF_LD_W_ABS, jt: 0, jf: 0, k: ARG0_LOW, label: "clone" },
    { code: BPF_JSET_K, jt: "deny", jf: "allow", k: CLONE_NAMESPACE_FLAGS },
    { code: BPF_LD_W_ABS, jt: 0, jf: 0, k: ARG0_LOW, label: "socket" },
    ...ALLOWED_SOCKET_FAMILIES.map((family) => ({ code: BPF_JEQ_K, jt: "allow", jf: 0, k: family })),
    // as if the family were not built into the kernel
    { code: BPF_RET_K, jt: 0, jf: 0, k: retErrno(EAFNOSUPPORT) },
    { code: BPF_RET_K, jt: 0, jf: 0, k: retErrno(ENOSYS), label: "nosys" },
    { code: BPF_RET_K, jt: 0, jf: 0, k: retErrno(EPERM), label: "deny" },
    { code: BPF_RET_K, jt: 0, jf: 0, k: RET_ALLOW, label: "allow" },
  ];
  cached = assemble(program);
  return cached;
}
