/* cmlens: let QEMU's -D log file be buffered by stdio.
 *
 * QEMU 7.2 calls fflush() on its log file after every logged line (util/log.c, qemu_log_unlock), so with
 * `-d exec,nochain` each executed translation block is one write(2): ~600 K writes on ds_cnn, two thirds of
 * what the log costs QEMU (bench/cycle_runs.py). Loaded with LD_PRELOAD into qemu-system-arm only, this
 * fflush() does nothing for the one FILE whose file is $CMLENS_QEMU_LOG and calls the C library's for every
 * other stream. stdio still writes the buffer out when it is full and at exit, so the log is complete when
 * QEMU exits normally; only the timing of the writes changes. Written for cmlens; no QEMU code. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static FILE *log_file;
static int no_log = -1;
static dev_t log_dev;
static ino_t log_ino;

static int is_log(FILE *f)
{
    struct stat st;
    if (f == log_file)
        return 1;
    if (no_log < 0) {
        const char *path = getenv("CMLENS_QEMU_LOG");
        no_log = !(path && stat(path, &st) == 0);
        if (!no_log) {
            log_dev = st.st_dev;
            log_ino = st.st_ino;
        }
    }
    if (no_log || log_file || fileno(f) <= 2 || fstat(fileno(f), &st) != 0)
        return 0;
    if (st.st_dev == log_dev && st.st_ino == log_ino) {
        log_file = f;
        return 1;
    }
    return 0;
}

int fflush(FILE *f)
{
    static int (*real_fflush)(FILE *);
    if (!real_fflush)
        real_fflush = (int (*)(FILE *))dlsym(RTLD_NEXT, "fflush");
    if (f && is_log(f))
        return 0;
    return real_fflush(f);
}
