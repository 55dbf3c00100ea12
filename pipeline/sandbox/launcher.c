/* sandbox-launch: the last step before untrusted code runs inside bubblewrap. In one exec it does
 * what setpriv, prlimit and GNU time would do in three: optionally drops from root to an unprivileged
 * uid/gid (no groups, no capabilities, no_new_privs), sets the rlimits, runs the program as its
 * child, and reports its network refusals and peak memory. Built by launcher.ts; see
 * docs/sandbox.md. Usage and reports are described above main. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define CONTROL_FD 4
#define STATUS_FD 5
#define MAX_MESSAGE (1 << 20)

/* whether the usage report goes on STATUS_FD (USAGE_FILE "-") */
static int report_on_status = 0;

extern char **environ;

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

static void drop_to(long long uid) {
  /* the bounding set can only shrink while we still hold CAP_SETPCAP, i.e. before setuid */
  for (int cap = 0; cap <= 63; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) die("drop capability");
  }
  if (setgroups(0, NULL) != 0) die("setgroups");
  if (setresgid((gid_t)uid, (gid_t)uid, (gid_t)uid) != 0) die("setresgid");
  /* leaving uid 0 for a non-zero uid clears every remaining capability */
  if (setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) != 0) die("setresuid");
}

/* Reads the whole message from the control fd and splits it into its NUL-terminated fields. */
static char **read_message(int *count) {
  /* the host may ignore it, or be gone (EPIPE): either way, wait for the orders */
  if (write(STATUS_FD, "R", 1) != 1 && errno != EPIPE) die("write status fd");
  char *buffer = malloc(MAX_MESSAGE);
  if (!buffer) die("malloc");
  size_t length = 0;
  for (;;) {
    ssize_t got = read(CONTROL_FD, buffer + length, MAX_MESSAGE - length);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) die("read control fd");
    if (got == 0) break;
    length += (size_t)got;
    if (length == MAX_MESSAGE) {
      dprintf(2, "sandbox-launch: message over %d bytes\n", MAX_MESSAGE);
      _exit(126);
    }
  }
  if (length == 0) _exit(125);
  if (write(STATUS_FD, "G", 1) != 1 && errno != EPIPE) die("write status fd");
  close(CONTROL_FD);
  if (!report_on_status) close(STATUS_FD);
  if (buffer[length - 1] != '\0') {
    dprintf(2, "sandbox-launch: truncated message\n");
    _exit(126);
  }
  int fields = 0;
  for (size_t i = 0; i < length; i++) fields += buffer[i] == '\0';
  char **field = calloc((size_t)fields + 1, sizeof *field);
  if (!field) die("calloc");
  char *at = buffer;
  for (int i = 0; i < fields; i++) {
    field[i] = at;
    at += strlen(at) + 1;
  }
  *count = fields;
  return field;
}

/* The sum of the named counters of a /proc/net/snmp-style file: "Proto: names" then "Proto: values"
   line pairs (snmp), or "name value" lines (snmp6). Missing file or counter: 0. */
static long long net_counters(const char *path, const char *const *names) {
  FILE *file = fopen(path, "re");
  if (!file) return 0;
  static char header[4096], line[4096];
  long long sum = 0;
  int have_header = 0;
  while (fgets(line, sizeof line, file)) {
    char *colon = strchr(line, ':');
    if (!colon) {
      char name[256];
      long long value = 0;
      if (sscanf(line, "%255s %lld", name, &value) == 2)
        for (const char *const *n = names; *n; n++) sum += strcmp(name, *n) == 0 ? value : 0;
      continue;
    }
    if (!have_header || strncmp(header, line, (size_t)(colon - line + 1)) != 0) {
      memcpy(header, line, sizeof header);
      have_header = 1;
      continue;
    }
    have_header = 0;
    char *key_save = NULL, *value_save = NULL;
    char *key = strtok_r(header, " \n", &key_save);
    char *value = strtok_r(line, " \n", &value_save);
    while (key && value) {
      char qualified[300];
      snprintf(qualified, sizeof qualified, "%.*s%s", (int)(colon - line), line, key);
      for (const char *const *n = names; *n; n++) sum += strcmp(qualified, *n) == 0 ? atoll(value) : 0;
      key = strtok_r(NULL, " \n", &key_save);
      value = strtok_r(NULL, " \n", &value_save);
    }
  }
  fclose(file);
  return sum;
}

static long long network_refusals(void) {
  static const char *const v4[] = {"IpOutNoRoutes", "UdpNoPorts", NULL};
  static const char *const v6[] = {"Ip6OutNoRoutes", "Udp6NoPorts", NULL};
  return net_counters("/proc/net/snmp", v4) + net_counters("/proc/net/snmp6", v6);
}

/* Closes every descriptor above stderr. bwrap passes on whatever it inherited that is not
   close-on-exec (a pipe or file a process above the pipeline left open for its children), and the
   program must see none of the host's files. */
static void close_inherited(void) {
  if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0) return;
  DIR *dir = opendir("/proc/self/fd");
  if (dir) {
    int own = dirfd(dir);
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
      int fd = atoi(entry->d_name);
      if (fd > 2 && fd != own) close(fd);
    }
    closedir(dir);
    return;
  }
  long most = sysconf(_SC_OPEN_MAX);
  for (long fd = 3; fd < (most > 0 && most < 65536 ? most : 65536); fd++) close((int)fd);
}

/*
 * It exits with the program's exit code, or 128 + signal when a signal killed it. Its report, in
 * USAGE_FILE: the line "network N" (how many packets the run's network namespace refused for want
 * of a route, or sent to a local port nobody listens on: a name lookup, the sandbox has no
 * resolver; counted by the kernel while the program ran, and only meaningful in a namespace of the
 * run's own, which the host decides), then the child's peak resident memory (KiB).
 *
 * The program gets no descriptor above stderr: bwrap passes on whatever it inherited that is not
 * close-on-exec, and the launcher closes it all before the exec.
 *
 * usage: sandbox-launch USAGE_FILE UID CPU_S AS_BYTES NPROC FSIZE_BYTES NOFILE -- PROGRAM [ARGS...]
 *        sandbox-launch --wait USAGE_FILE UID
 *   UID -1 keeps the current uid; AS_BYTES -1 leaves the address space unlimited.
 *   --wait: a sandbox prepared before its request arrives. After the uid drop it reads the rest from
 *   fd 4 until EOF, as NUL-terminated fields: CPU_S AS_BYTES NPROC FSIZE_BYTES NOFILE ARGC ARGV...
 *   ENVC ENV... (the program's whole environment). EOF before a complete message: exit 125, unused.
 *   It writes "R" to fd 5 when it starts waiting, so the host knows the sandbox is built, and "G"
 *   once it has its orders, so the host knows a sandbox that dies before that never ran anything.
 *   (Two pipes, not one socket: the spawner's pipes reach the host through /proc, see spawner.c.)
 *   USAGE_FILE "-": the usage report goes on fd 5 once the program has ended (after "G" with
 *   --wait), so the sandbox needs no usage file, and the program cannot reach the report (fd 5 is
 *   closed in it, as every descriptor above stderr, and we are undumpable).
 */
int main(int argc, char **argv) {
  int waiting = argc == 4 && strcmp(argv[1], "--wait") == 0;
  if (!waiting && (argc < 10 || strcmp(argv[8], "--") != 0)) {
    dprintf(2, "usage: sandbox-launch USAGE UID CPU AS NPROC FSIZE NOFILE -- PROGRAM [ARGS...]\n"
               "       sandbox-launch --wait USAGE UID\n");
    return 126;
  }
  if (waiting) argv++;
  report_on_status = strcmp(argv[1], "-") == 0;
  int usage = report_on_status ? STATUS_FD : open(argv[1], O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
  if (usage < 0) die("open usage file");
  if (report_on_status && fcntl(usage, F_SETFD, FD_CLOEXEC) != 0) die("status fd");
  long long uid = number(argv[2], "uid");
  if (uid >= 0) drop_to(uid);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("no_new_privs");
  /* the program runs as our uid: undumpable, we keep it out of /proc/OUR_PID/fd, where it could
     reopen the report's pipe or file (its own exec makes it dumpable again) */
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) die("dumpable");
  /* a host that stopped listening must not turn the program's exit status into our SIGPIPE */
  signal(SIGPIPE, SIG_IGN);
  /* limits: CPU AS NPROC FSIZE NOFILE; then the program's argv (and, waiting, its environment) */
  char **limits = &argv[3];
  char **program = &argv[9];
  if (waiting) {
    int fields = 0;
    char **message = read_message(&fields);
    long long argc_program = fields > 6 ? number(message[5], "argc") : -1;
    if (argc_program < 1 || 6 + argc_program >= fields) {
      dprintf(2, "sandbox-launch: malformed message\n");
      return 126;
    }
    limits = message;
    program = &message[6];
    long long envc = number(message[6 + argc_program], "envc");
    if (envc < 0 || 7 + argc_program + envc != fields) {
      dprintf(2, "sandbox-launch: malformed message\n");
      return 126;
    }
    message[6 + argc_program] = NULL; /* ends the program's argv */
    environ = &message[7 + argc_program];
  }
  limit(RLIMIT_CPU, number(limits[0], "cpu"), "RLIMIT_CPU");
  limit(RLIMIT_AS, number(limits[1], "address space"), "RLIMIT_AS");
  limit(RLIMIT_NPROC, number(limits[2], "processes"), "RLIMIT_NPROC");
  limit(RLIMIT_FSIZE, number(limits[3], "file size"), "RLIMIT_FSIZE");
  limit(RLIMIT_NOFILE, number(limits[4], "open files"), "RLIMIT_NOFILE");
  limit(RLIMIT_CORE, 0, "RLIMIT_CORE");

  long long refused_before = network_refusals();
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    close_inherited();
    signal(SIGPIPE, SIG_DFL);
    execvp(program[0], program);
    dprintf(2, "sandbox-launch: cannot run %s: %s\n", program[0], strerror(errno));
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
  /* one write: the report arrives whole or not at all */
  dprintf(usage, "network %lld\n%ld\n", network_refusals() - refused_before, usage_report.ru_maxrss);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 126;
}
