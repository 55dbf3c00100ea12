/*
 * sandbox-launch: the last step before untrusted code runs inside bubblewrap. In one exec it does
 * what setpriv, prlimit and GNU time would do in three: optionally drops from root to an unprivileged
 * uid/gid (no groups, no capabilities, no_new_privs), sets the rlimits, runs the program as its
 * child, and writes the child's peak resident memory (KiB) to a usage file. It exits with the
 * program's exit code, or 128 + signal when a signal killed it.
 *
 * usage: sandbox-launch USAGE_FILE UID CPU_S AS_BYTES NPROC FSIZE_BYTES NOFILE -- PROGRAM [ARGS...]
 *   UID -1 keeps the current uid; AS_BYTES -1 leaves the address space unlimited.
 * Built by pipeline/sandbox/launcher.ts; see docs/sandbox.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what) {
  dprintf(2, "sandbox-launch: %s: %s\n", what, strerror(errno));
  _exit(126);
}

static long long number(const char *text, const char *what) {
  char *end = NULL;
  errno = 0;
  long long value = strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') {
    dprintf(2, "sandbox-launch: bad %s: %s\n", what, text);
    _exit(126);
  }
  return value;
}

static void limit(int resource, long long value, const char *what) {
  struct rlimit rl;
  rl.rlim_cur = rl.rlim_max = value < 0 ? RLIM_INFINITY : (rlim_t)value;
  if (setrlimit(resource, &rl) != 0) die(what);
}

int main(int argc, char **argv) {
  if (argc < 10 || strcmp(argv[8], "--") != 0) {
    dprintf(2, "usage: sandbox-launch USAGE UID CPU AS NPROC FSIZE NOFILE -- PROGRAM [ARGS...]\n");
    return 126;
  }
  int usage = open(argv[1], O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
  if (usage < 0) die("open usage file");
  long long uid = number(argv[2], "uid");
  if (uid >= 0) {
    /* the bounding set can only shrink while we still hold CAP_SETPCAP, i.e. before setuid */
    for (int cap = 0; cap <= 63; cap++) {
      if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) die("drop capability");
    }
    if (setgroups(0, NULL) != 0) die("setgroups");
    if (setresgid((gid_t)uid, (gid_t)uid, (gid_t)uid) != 0) die("setresgid");
    /* leaving uid 0 for a non-zero uid clears every remaining capability */
    if (setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) != 0) die("setresuid");
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
  limit(RLIMIT_CPU, number(argv[3], "cpu"), "RLIMIT_CPU");
  limit(RLIMIT_AS, number(argv[4], "address space"), "RLIMIT_AS");
  limit(RLIMIT_NPROC, number(argv[5], "processes"), "RLIMIT_NPROC");
  limit(RLIMIT_FSIZE, number(argv[6], "file size"), "RLIMIT_FSIZE");
  limit(RLIMIT_NOFILE, number(argv[7], "open files"), "RLIMIT_NOFILE");
  limit(RLIMIT_CORE, 0, "RLIMIT_CORE");

  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    execvp(argv[9], &argv[9]);
    dprintf(2, "sandbox-launch: cannot run %s: %s\n", argv[9], strerror(errno));
    _exit(127);
  }
  int status = 0;
  struct rusage usage_report;
  memset(&usage_report, 0, sizeof usage_report);
  /* Should we ever be the namespace's init we would inherit orphans: reap them too, or their zombies
     would count against RLIMIT_NPROC. The run ends when the program itself ends. */
  for (;;) {
    pid_t done = wait4(-1, &status, 0, &usage_report);
    if (done == child) break;
    if (done < 0 && errno != EINTR) die("wait");
  }
  dprintf(usage, "%ld\n", usage_report.ru_maxrss);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 126;
}
