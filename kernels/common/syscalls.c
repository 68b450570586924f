/* Newlib system calls for the board layer: stdout/stderr go to the UART, other files go to the host
 * through semihosting (used by ExecuTorch's runner in SEMIHOSTING mode), _exit reports the status
 * through semihosting, _sbrk hands out the heap between the linker symbols end and __HeapLimit. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cmlens/board.h"
#include "cmlens/semihost.h"

#undef errno
extern int errno;

#define CMLENS_MAX_FILES 8
#define CMLENS_FIRST_FILE_FD 3

typedef struct {
  int handle; /* semihosting handle, -1 when the slot is free */
  uint32_t pos;
} cmlens_file_t;

static cmlens_file_t files[CMLENS_MAX_FILES] = {
    {-1, 0}, {-1, 0}, {-1, 0}, {-1, 0}, {-1, 0}, {-1, 0}, {-1, 0}, {-1, 0}};

static cmlens_file_t *file_of(int fd) {
  int i = fd - CMLENS_FIRST_FILE_FD;
  if (i < 0 || i >= CMLENS_MAX_FILES || files[i].handle < 0) return 0;
  return &files[i];
}

void cmlens_exit(int status) {
  cmlens_report_memory(); /* CMLENS MEMORY: stack/heap high-water marks (memmark.c) */
  if (cmlens_board.eot_on_exit) cmlens_uart_putc('\x04');
#if !defined(CMLENS_NO_SEMIHOSTING)
  cmlens_sh_exit(status);
#endif
  for (;;) {
    __asm volatile("wfi");
  }
}

void _exit(int status) { cmlens_exit(status); }

int _write(int fd, const char *buf, int len) {
  if (fd == 1 || fd == 2) {
    cmlens_uart_write(buf, (unsigned)len);
    return len;
  }
  cmlens_file_t *f = file_of(fd);
  if (!f) {
    errno = EBADF;
    return -1;
  }
  int n = cmlens_sh_write(f->handle, buf, (size_t)len);
  f->pos += (uint32_t)n;
  return n;
}

int _read(int fd, char *buf, int len) {
  if (fd == 0) return 0; /* no UART input: end of file */
  cmlens_file_t *f = file_of(fd);
  if (!f) {
    errno = EBADF;
    return -1;
  }
  int n = cmlens_sh_read(f->handle, buf, (size_t)len);
  f->pos += (uint32_t)n;
  return n;
}

int _open(const char *path, int flags, ...) {
  const char *mode = "rb";
  int acc = flags & O_ACCMODE;
  if (flags & O_APPEND) {
    mode = acc == O_RDWR ? "a+b" : "ab";
  } else if (acc == O_WRONLY) {
    mode = "wb";
  } else if (acc == O_RDWR) {
    mode = (flags & O_TRUNC) ? "w+b" : "r+b";
  }
  for (int i = 0; i < CMLENS_MAX_FILES; i++) {
    if (files[i].handle < 0) {
      int h = cmlens_sh_open(path, mode);
      if (h < 0) {
        errno = ENOENT;
        return -1;
      }
      files[i].handle = h;
      files[i].pos = 0;
      return CMLENS_FIRST_FILE_FD + i;
    }
  }
  errno = EMFILE;
  return -1;
}

int _close(int fd) {
  cmlens_file_t *f = file_of(fd);
  if (!f) return fd >= 0 && fd < CMLENS_FIRST_FILE_FD ? 0 : -1;
  cmlens_sh_close(f->handle);
  f->handle = -1;
  return 0;
}

off_t _lseek(int fd, off_t offset, int whence) {
  cmlens_file_t *f = file_of(fd);
  if (!f) return fd < CMLENS_FIRST_FILE_FD ? 0 : -1;
  int32_t base = 0;
  if (whence == SEEK_CUR) base = (int32_t)f->pos;
  if (whence == SEEK_END) base = cmlens_sh_flen(f->handle);
  int32_t pos = base + (int32_t)offset;
  if (pos < 0 || cmlens_sh_seek(f->handle, (size_t)pos) != 0) {
    errno = EINVAL;
    return -1;
  }
  f->pos = (uint32_t)pos;
  return pos;
}

int _fstat(int fd, struct stat *st) {
  st->st_mode = fd < CMLENS_FIRST_FILE_FD ? S_IFCHR : S_IFREG;
  st->st_blksize = 0;
  return 0;
}

int _isatty(int fd) { return fd >= 0 && fd < CMLENS_FIRST_FILE_FD; }

int _getpid(void) { return 1; }

int _kill(int pid, int sig) {
  (void)pid;
  (void)sig;
  errno = EINVAL;
  return -1;
}

extern char end;         /* first free byte after .bss/.heap start, from the linker script */
extern char __HeapLimit; /* end of the heap region */

extern uintptr_t cmlens_heap_high;  /* memmark.c: the heap high-water mark reported at exit */
extern uint32_t cmlens_heap_refused;

void *_sbrk(ptrdiff_t incr) {
  static char *brk = &end;
  char *prev = brk;
  if (brk + incr > &__HeapLimit || brk + incr < &end) {
    cmlens_heap_refused++;
    errno = ENOMEM;
    return (void *)-1;
  }
  brk += incr;
  if ((uintptr_t)brk > cmlens_heap_high) cmlens_heap_high = (uintptr_t)brk;
  return prev;
}

/* newlib's aligned_alloc (used by ExecuTorch's runtime) calls posix_memalign, which Debian's newlib and
 * newlib-nano do not provide: implement it with memalign. Weak, in case a C library has its own. */
#include <malloc.h>
__attribute__((weak)) int posix_memalign(void **memptr, size_t alignment, size_t size) {
  if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) {
    return EINVAL;
  }
  void *p = memalign(alignment, size);
  if (p == NULL) {
    return ENOMEM;
  }
  *memptr = p;
  return 0;
}
