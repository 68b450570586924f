/* Arm semihosting (https://github.com/ARM-software/abi-aa semihosting spec) for M-profile: BKPT 0xAB,
 * operation in r0, parameter block pointer in r1, result in r0. */
#include "cmlens/semihost.h"

#include <string.h>

int32_t cmlens_sh_call(int32_t op, void *arg) {
  register int32_t r0 __asm__("r0") = op;
  register void *r1 __asm__("r1") = arg;
  __asm volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void cmlens_sh_write0(const char *s) { cmlens_sh_call(CMLENS_SYS_WRITE0, (void *)s); }

void cmlens_sh_exit(int status) {
  /* SYS_EXIT_EXTENDED carries the exit status (SYS_EXIT on 32-bit Arm only knows success/failure). */
  uint32_t block[2] = {0x20026u /* ADP_Stopped_ApplicationExit */, (uint32_t)status};
  cmlens_sh_call(CMLENS_SYS_EXIT_EXTENDED, block);
  /* Host without SYS_EXIT_EXTENDED: fall back to SYS_EXIT (0 -> success, other -> RunTimeErrorUnknown). */
  cmlens_sh_call(CMLENS_SYS_EXIT, (void *)(uintptr_t)(status == 0 ? 0x20026u : 0x20023u));
  for (;;) {
  }
}

int cmlens_sh_open(const char *path, const char *fopen_mode) {
  /* Mode index as in the semihosting spec: r rb r+ r+b w wb w+ w+b a ab a+ a+b. */
  static const char *const modes[] = {"r", "rb", "r+", "r+b", "w", "wb", "w+", "w+b", "a", "ab", "a+", "a+b"};
  uint32_t mode = 1;
  for (uint32_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
    if (strcmp(fopen_mode, modes[i]) == 0) mode = i;
  }
  uint32_t block[3] = {(uint32_t)(uintptr_t)path, mode, (uint32_t)strlen(path)};
  return cmlens_sh_call(CMLENS_SYS_OPEN, block);
}

int cmlens_sh_close(int handle) {
  uint32_t block[1] = {(uint32_t)handle};
  return cmlens_sh_call(CMLENS_SYS_CLOSE, block);
}

int cmlens_sh_write(int handle, const void *buf, size_t len) {
  uint32_t block[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)buf, (uint32_t)len};
  return (int)len - cmlens_sh_call(CMLENS_SYS_WRITE, block); /* returns bytes NOT written */
}

int cmlens_sh_read(int handle, void *buf, size_t len) {
  uint32_t block[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)buf, (uint32_t)len};
  return (int)len - cmlens_sh_call(CMLENS_SYS_READ, block); /* returns bytes NOT read */
}

int cmlens_sh_seek(int handle, size_t pos) {
  uint32_t block[2] = {(uint32_t)handle, (uint32_t)pos};
  return cmlens_sh_call(CMLENS_SYS_SEEK, block);
}

int cmlens_sh_flen(int handle) {
  uint32_t block[1] = {(uint32_t)handle};
  return cmlens_sh_call(CMLENS_SYS_FLEN, block);
}

int cmlens_sh_args(char **argv, int max_args) {
  static char cmdline[512];
  uint32_t block[2] = {(uint32_t)(uintptr_t)cmdline, sizeof(cmdline) - 1};
  if (cmlens_sh_call(CMLENS_SYS_GET_CMDLINE, block) != 0) return 0;
  cmdline[block[1] < sizeof(cmdline) ? block[1] : sizeof(cmdline) - 1] = 0;
  int argc = 0;
  char *p = cmdline;
  while (*p && argc < max_args) {
    while (*p == ' ') *p++ = 0;
    if (!*p) break;
    argv[argc++] = p;
    while (*p && *p != ' ') p++;
  }
  argv[argc] = 0;
  return argc;
}
