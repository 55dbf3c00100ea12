/* sandbox-spawn: forks and execs sandbox commands for the Node process that started it, which would
 * pay far more CPU per fork itself (a fork copies the forker's page tables and mappings). Started
 * once per Node process (spawner.ts), it serves requests on fd 0, answers on fd 1, and exits when
 * fd 0 reaches EOF (its parent is gone or done with it). Built by launcher.ts; see docs/sandbox.md.
 * The protocol is described above main. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_REQUEST (4 << 20)

struct child {
  char id[32];
  pid_t pid;     /* 0 once reaped */
  int held[5];   /* our copies of the parent's ends, -1 once released */
  int released;
  int report;    /* while it starts: the read end of its exec-error pipe; -1 once answered */
  int control;
};

static void close_above(int lowest, int keep);

static struct child *children = NULL;
static size_t child_count = 0, child_room = 0;

static void die(const char *what) {
  dprintf(2, "sandbox-spawn: %s: %s\n", what, strerror(errno));
  _exit(1);
}

/* Writes all of `text` to fd 1; a parent that stopped reading means we are done. */
static void answer(const char *text) {
  size_t length = strlen(text), done = 0;
  while (done < length) {
    ssize_t wrote = write(1, text + done, length - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) _exit(0);
    done += (size_t)wrote;
  }
}

static int read_full(int fd, void *buffer, size_t length) {
  size_t done = 0;
  while (done < length) {
    ssize_t got = read(fd, (char *)buffer + done, length - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return -1;
    done += (size_t)got;
  }
  return 0;
}

static struct child *find_id(const char *id) {
  for (size_t i = 0; i < child_count; i++)
    if (strcmp(children[i].id, id) == 0) return &children[i];
  return NULL;
}

static void forget(struct child *child) {
  if (child->pid != 0 || !child->released) return;
  *child = children[--child_count];
}

static void release(struct child *child) {
  for (int i = 0; i < 5; i++) {
    if (child->held[i] >= 0) close(child->held[i]);
    child->held[i] = -1;
  }
  child->released = 1;
  forget(child);
}

/*
 * Answers whether a starting child is running its program ("ok", its exec closed the pipe) or
 * could not start ("fail": it wrote why, and the entry goes). Children start side by side: we wait
 * for none of their execs. `reaped`: it has ended and been waited for. Returns whether it started.
 */
static int finish_start(struct child *child, int reaped) {
  char failure[64] = {0}, line[160];
  ssize_t got;
  do got = read(child->report, failure, sizeof failure - 1);
  while (got < 0 && errno == EINTR);
  close(child->report);
  child->report = -1;
  if (got > 0) {
    if (!reaped)
      while (waitpid(child->pid, NULL, 0) < 0 && errno == EINTR) {
      }
    snprintf(line, sizeof line, "fail %s %s\n", child->id, failure);
    answer(line);
    child->pid = 0;
    release(child);
    return 0;
  }
  const int *p = child->held;
  int length = snprintf(line, sizeof line, "ok %s %d %d %d %d", child->id, child->pid, p[0], p[1], p[2]);
  /* fds 4 and 5, "-" for the one a report-only command does not have */
  if (child->control) {
    for (int slot = 3; slot < 5; slot++) {
      if (p[slot] >= 0) length += snprintf(line + length, sizeof line - (size_t)length, " %d", p[slot]);
      else length += snprintf(line + length, sizeof line - (size_t)length, " -");
    }
  }
  snprintf(line + length, sizeof line - (size_t)length, "\n");
  answer(line);
  return 1;
}

/* Reports every child that has ended (after its start, should that still be unanswered). */
static void reap(void) {
  for (;;) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    for (size_t i = 0; i < child_count; i++) {
      if (children[i].pid != pid) continue;
      /* it ended before we read its start: the pipe holds the answer now */
      if (children[i].report >= 0 && !finish_start(&children[i], 1)) break;
      char line[96];
      if (WIFSIGNALED(status))
        snprintf(line, sizeof line, "exit %s signal %d\n", children[i].id, WTERMSIG(status));
      else
        snprintf(line, sizeof line, "exit %s code %d\n", children[i].id, WEXITSTATUS(status));
      answer(line);
      children[i].pid = 0;
      forget(&children[i]);
      break;
    }
  }
}

/* In the child: reports why it could not start, then leaves. */
static void child_fail(int report, const char *what) {
  int error = errno;
  char text[64];
  int length = snprintf(text, sizeof text, "%d %s", error, what);
  if (write(report, text, (size_t)length) < 0) _exit(127);
  _exit(127);
}

static const char *lookup(const char *name, const char *key) {
  size_t length = strlen(key);
  return strncmp(name, key, length) == 0 && name[length] == '=' ? name + length + 1 : NULL;
}

/* execve, searching the child's own PATH when FILE has no slash. */
static void exec_file(const char *file, char **argv, char **env) {
  if (strchr(file, '/')) {
    execve(file, argv, env);
    return;
  }
  const char *path = "/usr/local/bin:/usr/bin:/bin";
  for (char **e = env; *e; e++)
    if (lookup(*e, "PATH")) path = lookup(*e, "PATH");
  int first_error = ENOENT;
  while (*path) {
    const char *colon = strchr(path, ':');
    size_t length = colon ? (size_t)(colon - path) : strlen(path);
    char candidate[4096];
    if (length + strlen(file) + 2 < sizeof candidate) {
      snprintf(candidate, sizeof candidate, "%.*s/%s", (int)length, length ? path : ".", file);
      execve(candidate, argv, env);
      if (errno != ENOENT && errno != ENOTDIR) first_error = errno;
    }
    path += length + (colon ? 1 : 0);
  }
  errno = first_error;
}

static long long number(const char *text) {
  char *end = NULL;
  errno = 0;
  long long value = strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') return -2;
  return value;
}

/* Answers that the command with `id` could not be started, for `error` at step `what`. */
static void refuse(const char *id, int error, const char *what) {
  char line[96];
  snprintf(line, sizeof line, "fail %.31s %d %s\n", id, error, what);
  answer(line);
}

static void close_pipes(int pipes[][2], int count) {
  for (int i = 0; i < count; i++) {
    close(pipes[i][0]);
    close(pipes[i][1]);
  }
}

static void spawn(char **field, int fields) {
  /* spawn ID FILE CWD UID GID FD3 CONTROL ARGC ... */
  const char *id = fields > 1 ? field[1] : "?";
  if (fields < 10 || strlen(id) >= sizeof children[0].id || find_id(id)) {
    refuse(id, EINVAL, "request");
    return;
  }
  const char *file = field[2], *cwd = field[3], *fd3_file = field[6];
  long long uid = number(field[4]), gid = number(field[5]);
  /* CONTROL: "0" none, "1" fd 4 (orders) and fd 5 (reports), "2" fd 5 alone */
  int control = field[7][0] == '1' ? 1 : field[7][0] == '2' ? 2 : 0;
  long long argc = number(field[8]);
  long long envc = argc >= 1 && argc < fields - 9 ? number(field[9 + argc]) : -1;
  if (uid < -1 || gid < -1 || argc < 1 || envc < 0 || envc > fields || 10 + argc + envc != fields) {
    refuse(id, EINVAL, "request");
    return;
  }
  /* room for the child's entry first: nothing may fail once it runs */
  if (child_count == child_room) {
    size_t room = child_room ? child_room * 2 : 64;
    struct child *grown = realloc(children, room * sizeof *children);
    if (!grown) {
      refuse(id, ENOMEM, "request");
      return;
    }
    children = grown;
    child_room = room;
  }
  char **argv = &field[9];
  char **env = &field[10 + argc];
  argv[argc] = NULL; /* was the ENVC field, already read */
  env[envc] = NULL;  /* one past the message's last field: calloc'd room */

  /* the child's descriptors, by slot: stdin, stdout, stderr, fd 4, fd 5 */
  static const int child_reads[5] = {1, 0, 0, 1, 0};
  static const int targets[5] = {0, 1, 2, 4, 5};
  int slots[5] = {0, 1, 2}, count = 3;
  if (control == 1) slots[count++] = 3;
  if (control) slots[count++] = 4;
  /* pipes[i] (for slots[i]): [0] read end, [1] write end; the child's end of each, and the
     parent's. A failure here is this command's, answered as such: the others run on */
  int pipes[6][2], made = 0;
  while (made <= count && pipe2(pipes[made], O_CLOEXEC) == 0) made++;
  if (made <= count) {
    int error = errno;
    close_pipes(pipes, made);
    refuse(id, error, "pipe");
    return;
  }
  int *report = pipes[count]; /* the child's exec error, if any; EOF once it has exec'd */

  pid_t spawner = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int error = errno;
    close_pipes(pipes, made);
    refuse(id, error, "fork");
    return;
  }
  if (pid == 0) {
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_UNBLOCK, &all, NULL);
    for (int signal_number = 1; signal_number < NSIG; signal_number++) signal(signal_number, SIG_DFL);
    if (setsid() < 0) child_fail(report[1], "setsid");
    /* its own descriptors first, then none of ours but the report pipe, before anything it may
       block on (a FIFO, a hung mount): it must not hold another command's pipes, nor our request
       and answer pipes, open meanwhile. Every descriptor of ours lies above 5 (placeholders hold
       3-5, close-on-exec), so no dup2 overwrites a source still needed. */
    for (int i = 0; i < count; i++)
      if (dup2(pipes[i][child_reads[slots[i]] ? 0 : 1], targets[slots[i]]) < 0) child_fail(report[1], "dup2");
    close_above(6, report[1]);
    int fd3 = -1;
    if (fd3_file[0] && (fd3 = open(fd3_file, O_RDONLY | O_CLOEXEC)) < 0) child_fail(report[1], "open-fd3");
    if (chdir(cwd) != 0) child_fail(report[1], "chdir");
    /* no supplementary group may survive a change of identity (group 0 among them) */
    if ((gid >= 0 || uid >= 0) && setgroups(0, NULL) != 0) child_fail(report[1], "setgroups");
    if (gid >= 0 && setgid((gid_t)gid) != 0) child_fail(report[1], "setgid");
    if (uid >= 0 && setuid((uid_t)uid) != 0) child_fail(report[1], "setuid");
    /* after the change of identity, which would clear it: the command dies with us, and not
       one we are already gone for */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != spawner)
      child_fail(report[1], "parent");
    if (fd3 >= 0 && dup2(fd3, 3) < 0) child_fail(report[1], "dup2");
    exec_file(file, argv, env);
    child_fail(report[1], "exec");
  }
  close(report[1]);
  for (int i = 0; i < count; i++) close(pipes[i][child_reads[slots[i]] ? 0 : 1]);
  /* answered once its exec closes the report pipe (or it writes why it could not start) */
  struct child *entry = &children[child_count++];
  snprintf(entry->id, sizeof entry->id, "%s", id);
  entry->pid = pid;
  entry->released = 0;
  entry->report = report[0];
  entry->control = control;
  for (int slot = 0; slot < 5; slot++) entry->held[slot] = -1;
  for (int i = 0; i < count; i++) entry->held[slots[i]] = pipes[i][child_reads[slots[i]] ? 1 : 0];
}

/* Closes every descriptor from `lowest` up, except `keep` (-1: none). */
static void close_above(int lowest, int keep) {
  if (keep < lowest) {
    if (syscall(SYS_close_range, (unsigned)lowest, ~0U, 0U) == 0) return;
  } else if ((keep == lowest || syscall(SYS_close_range, (unsigned)lowest, (unsigned)keep - 1, 0U) == 0) &&
             syscall(SYS_close_range, (unsigned)keep + 1, ~0U, 0U) == 0) {
    return;
  }
  /* no close_range (Linux < 5.9): walk our descriptors (the walk goes by number, so closing
     the ones behind it disturbs nothing) */
  DIR *dir = opendir("/proc/self/fd");
  if (!dir) _exit(127);
  int own = dirfd(dir);
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) {
    int fd = atoi(entry->d_name);
    if (fd >= lowest && fd != own && fd != keep) close(fd);
  }
  closedir(dir);
}

/*
 * usage: sandbox-spawn PARENT_PID (it leaves at once should its parent not be that process).
 * It ignores the terminal's signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT): its parent decides.
 *
 * A request is a 4-byte little-endian length (at most 4 MiB), then NUL-terminated fields:
 *   spawn ID FILE CWD UID GID FD3_FILE CONTROL ARGC ARGV... ENVC ENV...
 *     UID/GID -1 keep ours. FD3_FILE "" leaves fd 3 closed, else a fresh descriptor of the file is
 *     the child's fd 3. CONTROL "1" gives the child a pipe on fd 4 (it reads) and one on fd 5 (it
 *     writes), "2" the fd 5 one alone (our launcher's usage report). The child leads a session
 *     and process group of its own, with default signal dispositions and no blocked signals, and
 *     has no other descriptor.
 *   release ID
 *     the parent has opened its ends of the child's pipes: we close ours.
 *   kill ID
 *     SIGKILL to the child's process group (and the child), for a parent that has no pid yet.
 * Answers are lines:
 *   ok ID PID FD0 FD1 FD2 [FD4 FD5]   it has exec'd (we wait for no exec: starts run side by side);
 *                                     our descriptors of the parent's ends (stdin's write end,
 *                                     stdout's and stderr's read ends, fd 4's write end, fd 5's
 *                                     read end; "-" for the one it lacks), which the parent
 *                                     opens as /proc/OUR_PID/fd/N, then releases
 *   fail ID ERRNO WHAT                 the child could not be started (WHAT: pipe, fork, chdir,
 *                                      setuid, exec, ...); every other command runs on
 *   exit ID code N | exit ID signal N  the child ended (after its ok line)
 */
int main(int argc, char **argv) {
  /* leave with the parent, whatever happens to it; gone already (before the prctl): leave now */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) die("prctl");
  if (argc != 2 || getppid() != (pid_t)atoll(argv[1])) return 0;
  /* our parent decides when we go (EOF on fd 0, or its death): a terminal's Ctrl-C is for it */
  signal(SIGPIPE, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  /* nothing of the parent's but our three standard descriptors; then fds 3-5 are held by
     placeholders that close on exec, so every descriptor we make lies above a child's targets */
  close_above(3, -1);
  for (int fd = 3; fd <= 5; fd++)
    if (open("/dev/null", O_RDONLY | O_CLOEXEC) != fd) die("placeholder descriptor");
  fcntl(0, F_SETFD, FD_CLOEXEC);
  fcntl(1, F_SETFD, FD_CLOEXEC);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  if (sigprocmask(SIG_BLOCK, &chld, NULL) != 0) die("sigprocmask");
  int signals = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signals < 0) die("signalfd");
  char *buffer = malloc(MAX_REQUEST + 1);
  /* a field may be a lone NUL: as many fields as bytes, at most */
  char **field = calloc(MAX_REQUEST + 2, sizeof *field);
  if (!buffer || !field) die("malloc");
  struct pollfd *wait_on = NULL;
  size_t wait_room = 0;
  for (;;) {
    /* requests, ended children, and the children still starting */
    if (wait_room < child_count + 2) {
      wait_room = child_room + 2;
      wait_on = realloc(wait_on, wait_room * sizeof *wait_on);
      if (!wait_on) die("realloc");
    }
    nfds_t watched = 0;
    wait_on[watched++] = (struct pollfd){.fd = 0, .events = POLLIN};
    wait_on[watched++] = (struct pollfd){.fd = signals, .events = POLLIN};
    for (size_t i = 0; i < child_count; i++)
      if (children[i].report >= 0) wait_on[watched++] = (struct pollfd){.fd = children[i].report, .events = POLLIN};
    if (poll(wait_on, watched, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    if (wait_on[1].revents) {
      struct signalfd_siginfo info;
      while (read(signals, &info, sizeof info) > 0) {
      }
      reap();
    }
    /* starts to answer; reap() may have answered (and removed) some meanwhile */
    for (nfds_t k = 2; k < watched; k++) {
      if (!wait_on[k].revents) continue;
      for (size_t i = 0; i < child_count; i++) {
        if (children[i].report != wait_on[k].fd) continue;
        finish_start(&children[i], 0);
        break;
      }
    }
    if (!wait_on[0].revents) continue;
    uint8_t header[4];
    if (read_full(0, header, 4) != 0) return 0;
    uint32_t length = header[0] | header[1] << 8 | header[2] << 16 | (uint32_t)header[3] << 24;
    if (length == 0 || length > MAX_REQUEST) {
      dprintf(2, "sandbox-spawn: bad request length %u\n", length);
      return 1;
    }
    if (read_full(0, buffer, length) != 0) return 0;
    buffer[length] = '\0';
    if (buffer[length - 1] != '\0') {
      dprintf(2, "sandbox-spawn: request not NUL-terminated\n");
      return 1;
    }
    int fields = 0;
    for (char *at = buffer; at < buffer + length; at += strlen(at) + 1) field[fields++] = at;
    field[fields] = NULL;
    if (strcmp(field[0], "spawn") == 0) {
      spawn(field, fields);
    } else if (strcmp(field[0], "release") == 0 && fields == 2) {
      struct child *child = find_id(field[1]);
      if (child) release(child);
    } else if (strcmp(field[0], "kill") == 0 && fields == 2) {
      /* the parent has no pid yet (the start is unanswered): its group, or itself before setsid */
      struct child *child = find_id(field[1]);
      if (child && child->pid > 0) {
        kill(-child->pid, SIGKILL);
        kill(child->pid, SIGKILL);
      }
    } else {
      dprintf(2, "sandbox-spawn: unknown request %s\n", field[0]);
      return 1;
    }
    /* a child may have ended while we were busy: the signalfd stays readable, so poll catches it */
  }
}
