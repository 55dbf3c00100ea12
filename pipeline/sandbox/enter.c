/* sandbox-enter: the first step of a sandboxed command, on the host. It moves itself into the run's
 * cgroups (so bubblewrap and every process the program starts count against the run's caps from
 * their first instruction; a cgroup v1 move does not take existing children along), volunteers the
 * tree for the host's OOM killer first, optionally drops to the run's unprivileged uid/gid, and
 * execs bubblewrap. Built by launcher.ts; see docs/sandbox.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static void die(const char *what, const char *detail) {
  dprintf(2, "sandbox-enter: %s %s: %s\n", what, detail, strerror(errno));
  _exit(125);
}

static void write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) die("open", path);
  ssize_t length = (ssize_t)strlen(text);
  if (write(fd, text, (size_t)length) != length) die("write", path);
  if (close(fd) != 0) die("close", path);
}

/*
 * usage: sandbox-enter UID CGROUP_PROCS_FILE... -- PROGRAM [ARGS...]
 *   UID -1 keeps the current uid. Each file gets "0" (this process) written to it.
 */
int main(int argc, char **argv) {
  int separator = 0;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) {
      separator = i;
      break;
    }
  }
  if (argc < 4 || separator == 0 || separator + 1 >= argc) {
    dprintf(2, "usage: sandbox-enter UID CGROUP_PROCS_FILE... -- PROGRAM [ARGS...]\n");
    return 125;
  }
  char *end = NULL;
  errno = 0;
  long long uid = strtoll(argv[1], &end, 10);
  if (errno != 0 || end == argv[1] || *end != '\0') {
    dprintf(2, "sandbox-enter: bad uid: %s\n", argv[1]);
    return 125;
  }
  for (int i = 2; i < separator; i++) write_file(argv[i], "0\n");
  /* a runaway run should be what the host gives up first when it runs short of memory */
  write_file("/proc/self/oom_score_adj", "1000\n");
  if (uid >= 0) {
    if (setgroups(0, NULL) != 0) die("setgroups", "");
    if (setresgid((gid_t)uid, (gid_t)uid, (gid_t)uid) != 0) die("setresgid", argv[1]);
    if (setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) != 0) die("setresuid", argv[1]);
  }
  execv(argv[separator + 1], &argv[separator + 1]);
  die("exec", argv[separator + 1]);
  return 125;
}
