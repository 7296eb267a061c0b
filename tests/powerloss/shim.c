/*
 * Power-loss simulator, loaded with LD_PRELOAD by tests/integration/powerloss.rs.
 *
 * It keeps an undo journal of every change to the watched directory that is not yet durable,
 * so that the test can roll the directory back to what a power loss would leave:
 *
 *   - file data is durable once the file is fsync'd or fdatasync'd;
 *   - a directory entry (a created file, a rename, an unlink) is durable once the directory
 *     itself is fsync'd (the POSIX model: an fsync of a file does not commit its name).
 *
 * Environment:
 *   POWERLOSS_DIR          the directory watched (absolute, canonical); only its direct
 *                          entries are tracked
 *   POWERLOSS_JOURNAL      a directory on the same file system, for the journal and the
 *                          saved copies (hard links of unlinked or replaced files)
 *   POWERLOSS_CRASH_AFTER  N: the Nth tracked call of this process kills it with SIGKILL
 *   POWERLOSS_CRASH_MODE   "before" (default) or "after": whether that call happens first
 *
 * The journal (JOURNAL/journal) has one line per event, fields separated by tabs:
 *   CALL  n name path          a tracked call (counted for POWERLOSS_CRASH_AFTER)
 *   DATA  dev ino copy path    first change of the file dev:ino since its last sync; copy is
 *                              the file in JOURNAL holding its content before that change
 *   SYNCF dev ino              fsync/fdatasync of dev:ino: its DATA lines so far are durable
 *   CREATE path                path was created
 *   UNLINK path victim         path was unlinked; victim is a hard link to it in JOURNAL
 *   RENAME from to victim      from was renamed to to; victim ("-" if none) is a hard link to
 *                              the file to replaced
 *   SYNCD                      the watched directory was fsync'd: entries so far are durable
 *   MMAPW path                 a shared writable mapping of a watched file (not modelled)
 *   CRASH n mode name path     the process kills itself here
 * Each line is written with one write() to an O_APPEND file: the page cache survives the
 * SIGKILL, so the journal needs no fsync. An empty file JOURNAL/dirty-dev-ino marks a file
 * changed since its last sync, for every process (one may write a file, another sync it).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static int enabled;
static char watched[PATH_MAX];
static size_t watched_len;
static struct stat watched_stat;
static char journal_dir[PATH_MAX];
static int journal_fd = -1;
static long crash_after = -1;
static int crash_after_call;
static long calls;
static long copies;


static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_pwritev)(int, const struct iovec *, int, off_t);
static int (*real_ftruncate)(int, off_t);
static int (*real_truncate)(const char *, off_t);
static int (*real_fallocate)(int, int, off_t, off_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_rename)(const char *, const char *);
static int (*real_renameat)(int, const char *, int, const char *);
static int (*real_renameat2)(int, const char *, int, const char *, unsigned);
static int (*real_unlink)(const char *);
static int (*real_unlinkat)(int, const char *, int);
static int (*real_link)(const char *, const char *);
static int (*real_linkat)(int, const char *, int, const char *, int);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);

static void die(const char *what) {
    char msg[512];
    int n = snprintf(msg, sizeof msg, "powerloss shim: %s: %s\n", what, strerror(errno));
    if (n > 0)
        (void)!write(2, msg, (size_t)n);
    _exit(111);
}

static void init_once(void);
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void) {
    if (!initialized)
        pthread_once(&once, init_once);
}

static void init_once(void) {
    initialized = 1;
#define RESOLVE(var, name) var = dlsym(RTLD_NEXT, name)
    RESOLVE(real_open, "open64");
    RESOLVE(real_openat, "openat64");
    RESOLVE(real_write, "write");
    RESOLVE(real_pwrite, "pwrite64");
    RESOLVE(real_writev, "writev");
    RESOLVE(real_pwritev, "pwritev64");
    RESOLVE(real_ftruncate, "ftruncate64");
    RESOLVE(real_truncate, "truncate64");
    RESOLVE(real_fallocate, "fallocate64");
    RESOLVE(real_fsync, "fsync");
    RESOLVE(real_fdatasync, "fdatasync");
    RESOLVE(real_rename, "rename");
    RESOLVE(real_renameat, "renameat");
    RESOLVE(real_renameat2, "renameat2");
    RESOLVE(real_unlink, "unlink");
    RESOLVE(real_unlinkat, "unlinkat");
    RESOLVE(real_link, "link");
    RESOLVE(real_linkat, "linkat");
    RESOLVE(real_mmap, "mmap64");
    const char *dir = getenv("POWERLOSS_DIR");
    const char *journal = getenv("POWERLOSS_JOURNAL");
    if (!dir || !journal || !*dir || !*journal)
        return;
    snprintf(watched, sizeof watched, "%s", dir);
    watched_len = strlen(watched);
    while (watched_len > 1 && watched[watched_len - 1] == '/')
        watched[--watched_len] = 0;
    if (stat(watched, &watched_stat) != 0)
        die("POWERLOSS_DIR");
    snprintf(journal_dir, sizeof journal_dir, "%s", journal);
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/journal", journal_dir);
    journal_fd = real_open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (journal_fd < 0)
        die("POWERLOSS_JOURNAL");
    const char *n = getenv("POWERLOSS_CRASH_AFTER");
    if (n && *n)
        crash_after = strtol(n, NULL, 10);
    const char *mode = getenv("POWERLOSS_CRASH_MODE");
    crash_after_call = mode && strcmp(mode, "after") == 0;
    enabled = 1;
}

static void journal(const char *fmt, ...) {
    char line[3 * PATH_MAX + 128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof line - 1)
        die("journal line too long");
    line[n++] = '\n';
    if (real_write(journal_fd, line, (size_t)n) != n)
        die("journal write");
}

/* The absolute form of path (relative to dirfd), or 0 when it cannot be told. */
static int absolute(int dirfd, const char *path, char *out) {
    if (!path)
        return 0;
    if (path[0] == '/') {
        snprintf(out, PATH_MAX, "%s", path);
    } else {
        char base[PATH_MAX];
        if (dirfd == AT_FDCWD) {
            if (!getcwd(base, sizeof base))
                return 0;
        } else {
            char link[64];
            snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
            ssize_t n = readlink(link, base, sizeof base - 1);
            if (n <= 0)
                return 0;
            base[n] = 0;
        }
        const char *rest = path;
        while (rest[0] == '.' && rest[1] == '/')
            rest += 2;
        if (snprintf(out, PATH_MAX, "%s/%s", base, rest) >= PATH_MAX)
            return 0;
    }
    size_t len = strlen(out);
    while (len > 1 && out[len - 1] == '/')
        out[--len] = 0;
    return 1;
}

/* Whether abs names a direct entry of the watched directory. */
static int is_entry(const char *abs) {
    return strncmp(abs, watched, watched_len) == 0 && abs[watched_len] == '/' &&
           abs[watched_len + 1] && !strchr(abs + watched_len + 1, '/');
}

static int tracked_path(int dirfd, const char *path, char *abs) {
    init();
    return enabled && absolute(dirfd, path, abs) && is_entry(abs);
}

static int is_watched_dir(const struct stat *st) {
    return S_ISDIR(st->st_mode) && st->st_dev == watched_stat.st_dev &&
           st->st_ino == watched_stat.st_ino;
}

/* Whether fd is a regular file that is an entry of the watched directory. */
static int tracked_fd(int fd, char *abs, struct stat *st) {
    init();
    if (!enabled || fd < 0 || fd == journal_fd)
        return 0;
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode))
        return 0;
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, abs, PATH_MAX - 1);
    if (n <= 0)
        return 0;
    abs[n] = 0;
    return is_entry(abs);
}

/* Counts a tracked call; kills the process before it when it is the chosen one. Returns
 * whether to kill it after the call. */
static int count(const char *name, const char *abs) {
    calls++;
    journal("CALL\t%ld\t%s\t%s", calls, name, abs);
    if (calls != crash_after)
        return 0;
    journal("CRASH\t%ld\t%s\t%s\t%s", calls, crash_after_call ? "after" : "before", name, abs);
    if (!crash_after_call) {
        raise(SIGKILL);
        _exit(137);
    }
    return 1;
}

static void crash_now(int crash) {
    if (crash) {
        raise(SIGKILL);
        _exit(137);
    }
}

/* Copies the current content of the file open at fd (or at abs when fd < 0) to a new file in
 * the journal directory; returns its name there. */
static void save_copy(int fd, const char *abs, char *name) {
    snprintf(name, 64, "copy-%d-%ld", (int)getpid(), ++copies);
    char path[PATH_MAX + 80];
    snprintf(path, sizeof path, "%s/%s", journal_dir, name);
    int out = real_open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out < 0)
        die("saving a copy");
    int in = -1;
    if (fd >= 0) {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        in = real_open(link, O_RDONLY | O_CLOEXEC);
    } else if (abs) {
        in = real_open(abs, O_RDONLY | O_CLOEXEC);
    }
    if (in >= 0) {
        char buf[65536];
        off_t at = 0;
        for (;;) {
            ssize_t n = pread(in, buf, sizeof buf, at);
            if (n < 0)
                die("reading a file to save");
            if (n == 0)
                break;
            if (real_write(out, buf, (size_t)n) != n)
                die("writing a saved copy");
            at += n;
        }
        close(in);
    }
    close(out);
}

/* Whether dev:ino changed since its last sync is shared by every process through a marker
 * file in the journal directory (one process may write a file and another sync it). */
static void marker(const struct stat *st, char *path) {
    snprintf(path, PATH_MAX + 80, "%s/dirty-%lu-%lu", journal_dir, (unsigned long)st->st_dev,
             (unsigned long)st->st_ino);
}

/* Before the first change of a file since its last sync: journal its durable content. A new
 * file (fresh) may reuse the inode number of a deleted one, whose marker is stale. */
static void before_data_change(int fd, const char *abs, const struct stat *st, int fresh) {
    char path[PATH_MAX + 80];
    marker(st, path);
    struct stat ignored;
    if (!fresh && stat(path, &ignored) == 0)
        return;
    char name[64];
    save_copy(fd, abs, name);
    journal("DATA\t%lu\t%lu\t%s\t%s", (unsigned long)st->st_dev, (unsigned long)st->st_ino, name,
            abs);
    int m = real_open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (m < 0)
        die("marking a file changed");
    close(m);
}

static void after_sync(const struct stat *st) {
    char path[PATH_MAX + 80];
    marker(st, path);
    (void)real_unlink(path);
}

/* A hard link to abs in the journal directory (so an unlink or a rename over it can be undone),
 * or "-" when abs does not exist. */
static void keep_victim(const char *abs, char *name) {
    struct stat st;
    if (lstat(abs, &st) != 0) {
        strcpy(name, "-");
        return;
    }
    snprintf(name, 64, "victim-%d-%ld", (int)getpid(), ++copies);
    char path[PATH_MAX + 80];
    snprintf(path, sizeof path, "%s/%s", journal_dir, name);
    if (real_link(abs, path) != 0)
        die("keeping a hard link of a replaced or unlinked file");
}

static int open_call(int dirfd, const char *path, int flags, mode_t mode, int at) {
    return at ? real_openat(dirfd, path, flags, mode) : real_open(path, flags, mode);
}

static int do_open(int dirfd, const char *path, int flags, mode_t mode, int at) {
    char abs[PATH_MAX];
#define call() open_call(dirfd, path, flags, mode, at)
    if (!tracked_path(at ? dirfd : AT_FDCWD, path, abs))
        return call();
    struct stat st;
    int exists = stat(abs, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return call();
    int creates = !exists && (flags & O_CREAT);
    int truncates = exists && (flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY && st.st_size > 0;
    if (!creates && !truncates)
        return call();
    pthread_mutex_lock(&lock);
    int crash = count(creates ? "create" : "truncate-open", abs);
    if (truncates)
        before_data_change(-1, abs, &st, 0);
    int fd = call();
    int saved = errno;
    if (fd >= 0 && creates) {
        journal("CREATE\t%s", abs);
        struct stat now;
        if (fstat(fd, &now) == 0)
            before_data_change(-1, abs, &now, 1);
    }
    pthread_mutex_unlock(&lock);
    crash_now(crash);
    errno = saved;
    return fd;
#undef call
}

static mode_t mode_arg(int flags, va_list ap) {
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    init();
    return do_open(AT_FDCWD, path, flags, mode, 0);
}
int open64(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    init();
    return do_open(AT_FDCWD, path, flags, mode, 0);
}
int openat(int dirfd, const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    init();
    return do_open(dirfd, path, flags, mode, 1);
}
int openat64(int dirfd, const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    init();
    return do_open(dirfd, path, flags, mode, 1);
}
int creat(const char *path, mode_t mode) {
    init();
    return do_open(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode, 0);
}
int creat64(const char *path, mode_t mode) {
    init();
    return do_open(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode, 0);
}

/* Wraps a call that changes the data of the file open at fd. */
#define DATA_CALL(name, type, call)                                                             \
    char abs[PATH_MAX];                                                                         \
    struct stat st;                                                                             \
    if (!tracked_fd(fd, abs, &st))                                                              \
        return call;                                                                            \
    pthread_mutex_lock(&lock);                                                                  \
    int crash = count(name, abs);                                                               \
    before_data_change(fd, abs, &st, 0);                                                        \
    type result = call;                                                                         \
    int saved = errno;                                                                          \
    pthread_mutex_unlock(&lock);                                                                \
    crash_now(crash);                                                                           \
    errno = saved;                                                                              \
    return result;

ssize_t write(int fd, const void *buf, size_t len) {
    init();
    if (!real_write)
        real_write = dlsym(RTLD_NEXT, "write");
    DATA_CALL("write", ssize_t, real_write(fd, buf, len))
}
ssize_t pwrite(int fd, const void *buf, size_t len, off_t at) {
    init();
    DATA_CALL("pwrite", ssize_t, real_pwrite(fd, buf, len, at))
}
ssize_t pwrite64(int fd, const void *buf, size_t len, off_t at) {
    init();
    DATA_CALL("pwrite", ssize_t, real_pwrite(fd, buf, len, at))
}
ssize_t writev(int fd, const struct iovec *iov, int n) {
    init();
    DATA_CALL("writev", ssize_t, real_writev(fd, iov, n))
}
ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t at) {
    init();
    DATA_CALL("pwritev", ssize_t, real_pwritev(fd, iov, n, at))
}
ssize_t pwritev64(int fd, const struct iovec *iov, int n, off_t at) {
    init();
    DATA_CALL("pwritev", ssize_t, real_pwritev(fd, iov, n, at))
}
int ftruncate(int fd, off_t len) {
    init();
    DATA_CALL("ftruncate", int, real_ftruncate(fd, len))
}
int ftruncate64(int fd, off_t len) {
    init();
    DATA_CALL("ftruncate", int, real_ftruncate(fd, len))
}
int fallocate(int fd, int mode, off_t at, off_t len) {
    init();
    DATA_CALL("fallocate", int, real_fallocate(fd, mode, at, len))
}
int fallocate64(int fd, int mode, off_t at, off_t len) {
    init();
    DATA_CALL("fallocate", int, real_fallocate(fd, mode, at, len))
}

static int do_truncate(const char *path, off_t len) {
    char abs[PATH_MAX];
    struct stat st;
    if (!tracked_path(AT_FDCWD, path, abs) || stat(abs, &st) != 0)
        return real_truncate(path, len);
    pthread_mutex_lock(&lock);
    int crash = count("truncate", abs);
    before_data_change(-1, abs, &st, 0);
    int result = real_truncate(path, len);
    int saved = errno;
    pthread_mutex_unlock(&lock);
    crash_now(crash);
    errno = saved;
    return result;
}
int truncate(const char *path, off_t len) {
    init();
    return do_truncate(path, len);
}
int truncate64(const char *path, off_t len) {
    init();
    return do_truncate(path, len);
}

static int do_sync(int fd, int data_only) {
    init();
    int (*real)(int) = data_only ? real_fdatasync : real_fsync;
    const char *name = data_only ? "fdatasync" : "fsync";
    struct stat st;
    if (!enabled || fstat(fd, &st) != 0)
        return real(fd);
    if (is_watched_dir(&st)) {
        pthread_mutex_lock(&lock);
        int crash = count(name, watched);
        int result = real(fd);
        int saved = errno;
        if (result == 0)
            journal("SYNCD");
        pthread_mutex_unlock(&lock);
        crash_now(crash);
        errno = saved;
        return result;
    }
    char abs[PATH_MAX];
    if (!tracked_fd(fd, abs, &st))
        return real(fd);
    pthread_mutex_lock(&lock);
    int crash = count(name, abs);
    int result = real(fd);
    int saved = errno;
    if (result == 0) {
        journal("SYNCF\t%lu\t%lu", (unsigned long)st.st_dev, (unsigned long)st.st_ino);
        after_sync(&st);
    }
    pthread_mutex_unlock(&lock);
    crash_now(crash);
    errno = saved;
    return result;
}
int fsync(int fd) { return do_sync(fd, 0); }
int fdatasync(int fd) { return do_sync(fd, 1); }

static int rename_call(int olddirfd, const char *old, int newdirfd, const char *new,
                       unsigned flags, int kind) {
    if (kind == 0)
        return real_rename(old, new);
    if (kind == 1)
        return real_renameat(olddirfd, old, newdirfd, new);
    return real_renameat2(olddirfd, old, newdirfd, new, flags);
}

static int do_rename(int olddirfd, const char *old, int newdirfd, const char *new,
                     unsigned flags, int kind) {
    char from[PATH_MAX], to[PATH_MAX];
#define call() rename_call(olddirfd, old, newdirfd, new, flags, kind)
    init();
    int a = tracked_path(olddirfd, old, from);
    int b = tracked_path(newdirfd, new, to);
    if (!a && !b)
        return call();
    if (!a || !b) {
        errno = EXDEV; /* not modelled: fail loudly rather than lose track */
        journal("UNMODELLED\trename\t%s\t%s", old, new);
        return -1;
    }
    pthread_mutex_lock(&lock);
    int crash = count("rename", to);
    char victim[64];
    keep_victim(to, victim);
    int result = call();
    int saved = errno;
    if (result == 0)
        journal("RENAME\t%s\t%s\t%s", from, to, victim);
    pthread_mutex_unlock(&lock);
    crash_now(crash);
    errno = saved;
    return result;
#undef call
}
int rename(const char *old, const char *new) {
    return do_rename(AT_FDCWD, old, AT_FDCWD, new, 0, 0);
}
int renameat(int olddirfd, const char *old, int newdirfd, const char *new) {
    return do_rename(olddirfd, old, newdirfd, new, 0, 1);
}
int renameat2(int olddirfd, const char *old, int newdirfd, const char *new, unsigned flags) {
    return do_rename(olddirfd, old, newdirfd, new, flags, 2);
}

static int unlink_call(int dirfd, const char *path, int flags, int at) {
    return at ? real_unlinkat(dirfd, path, flags) : real_unlink(path);
}

static int do_unlink(int dirfd, const char *path, int flags, int at) {
    char abs[PATH_MAX];
#define call() unlink_call(dirfd, path, flags, at)
    if (!tracked_path(at ? dirfd : AT_FDCWD, path, abs) || (flags & AT_REMOVEDIR))
        return call();
    pthread_mutex_lock(&lock);
    int crash = count("unlink", abs);
    char victim[64];
    keep_victim(abs, victim);
    int result = call();
    int saved = errno;
    if (result == 0)
        journal("UNLINK\t%s\t%s", abs, victim);
    pthread_mutex_unlock(&lock);
    crash_now(crash);
    errno = saved;
    return result;
#undef call
}
int unlink(const char *path) {
    init();
    return do_unlink(AT_FDCWD, path, 0, 0);
}
int unlinkat(int dirfd, const char *path, int flags) {
    init();
    return do_unlink(dirfd, path, flags, 1);
}

static int link_call(int olddirfd, const char *old, int newdirfd, const char *new, int flags,
                     int at) {
    return at ? real_linkat(olddirfd, old, newdirfd, new, flags) : real_link(old, new);
}

static int do_link(int olddirfd, const char *old, int newdirfd, const char *new, int flags,
                   int at) {
    char abs[PATH_MAX];
#define call() link_call(olddirfd, old, newdirfd, new, flags, at)
    if (!tracked_path(at ? newdirfd : AT_FDCWD, new, abs))
        return call();
    pthread_mutex_lock(&lock);
    int crash = count("link", abs);
    int result = call();
    int saved = errno;
    if (result == 0)
        journal("CREATE\t%s", abs);
    pthread_mutex_unlock(&lock);
    crash_now(crash);
    errno = saved;
    return result;
#undef call
}
int link(const char *old, const char *new) {
    init();
    return do_link(AT_FDCWD, old, AT_FDCWD, new, 0, 0);
}
int linkat(int olddirfd, const char *old, int newdirfd, const char *new, int flags) {
    init();
    return do_link(olddirfd, old, newdirfd, new, flags, 1);
}

static void *do_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t at) {
    if (!real_mmap)
        real_mmap = dlsym(RTLD_NEXT, "mmap64");
    if (fd >= 0 && (prot & PROT_WRITE) && (flags & MAP_SHARED)) {
        char abs[PATH_MAX];
        struct stat st;
        if (tracked_fd(fd, abs, &st)) {
            pthread_mutex_lock(&lock);
            journal("MMAPW\t%s", abs);
            pthread_mutex_unlock(&lock);
        }
    }
    return real_mmap(addr, len, prot, flags, fd, at);
}
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t at) {
    return do_mmap(addr, len, prot, flags, fd, at);
}
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t at) {
    return do_mmap(addr, len, prot, flags, fd, at);
}
