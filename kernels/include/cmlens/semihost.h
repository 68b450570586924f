/* Arm semihosting calls (BKPT 0xAB on M-profile). They need a host that answers: QEMU with
 * -semihosting, an FVP with cpu0.semihosting-enable=1, or a debugger. Without one, BKPT faults. */
#ifndef CMLENS_SEMIHOST_H
#define CMLENS_SEMIHOST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  CMLENS_SYS_OPEN = 0x01,
  CMLENS_SYS_CLOSE = 0x02,
  CMLENS_SYS_WRITE0 = 0x04,
  CMLENS_SYS_WRITE = 0x05,
  CMLENS_SYS_READ = 0x06,
  CMLENS_SYS_SEEK = 0x0A,
  CMLENS_SYS_FLEN = 0x0C,
  CMLENS_SYS_GET_CMDLINE = 0x15,
  CMLENS_SYS_EXIT = 0x18,
  CMLENS_SYS_EXIT_EXTENDED = 0x20,
};

int32_t cmlens_sh_call(int32_t op, void *arg);
void cmlens_sh_write0(const char *s);
void cmlens_sh_exit(int status) __attribute__((noreturn));
/* File access on the host (relative paths resolve in the simulator's working directory). */
int cmlens_sh_open(const char *path, const char *fopen_mode);
int cmlens_sh_close(int handle);
int cmlens_sh_write(int handle, const void *buf, size_t len);   /* returns bytes written */
int cmlens_sh_read(int handle, void *buf, size_t len);          /* returns bytes read */
int cmlens_sh_seek(int handle, size_t pos);
int cmlens_sh_flen(int handle);
/* Splits the host command line into argv (at most max_args); returns argc (0 when unavailable). */
int cmlens_sh_args(char **argv, int max_args);

#ifdef __cplusplus
}
#endif

#endif /* CMLENS_SEMIHOST_H */
