/* C99 length modifiers for newlib's printf family: %zu/%zd (size_t), %td (ptrdiff_t), %jd (intmax_t).
 *
 * Neither newlib-nano nor Debian's full newlib (built without --enable-newlib-io-c99-formats) knows them:
 * ExecuTorch's log lines came out as "zd input tensors have different dim orders" and "KernelCall failed
 * at instruction zu:zu in operator \xef\xbf\xbd.Mk" (the unknown conversion also shifted every later
 * argument, so the %s read a number as a pointer). ExecuTorch formats ET_LOG messages with vsnprintf
 * (runtime/platform/log.cpp) and the runner uses printf/fprintf/snprintf.
 *
 * The board layer links with --wrap for each function below: the wrapper rewrites the length modifier
 * to one newlib has with the same argument size under the AAPCS (size_t and ptrdiff_t are 32 bits like
 * long: z, t -> l; intmax_t is 64 bits: j -> ll) and calls the real function. Formats without those
 * modifiers go straight through. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

_Static_assert(sizeof(size_t) == sizeof(long) && sizeof(ptrdiff_t) == sizeof(long), "z/t -> l needs 32-bit size_t");
_Static_assert(sizeof(intmax_t) == sizeof(long long), "j -> ll needs 64-bit intmax_t");

#define CMLENS_FORMAT_MAX 512

int __real_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap);
int __real_vsprintf(char *buf, const char *fmt, va_list ap);
int __real_vfprintf(FILE *f, const char *fmt, va_list ap);
int __real_vprintf(const char *fmt, va_list ap);

/* Returns fmt itself when it needs no rewrite (or does not fit `out`), else `out` with z/t -> l, j -> ll. */
static const char *c99_format(const char *fmt, char *out, size_t cap) {
  int needed = 0;
  for (const char *p = fmt; *p; p++) {
    if (*p == 'z' || *p == 't' || *p == 'j') {
      needed = 1;
      break;
    }
  }
  if (!needed) return fmt;
  size_t o = 0;
  const char *p = fmt;
  while (*p) {
    if (o + 3 >= cap) return fmt; /* too long to rewrite: print as newlib would */
    if (*p != '%') {
      out[o++] = *p++;
      continue;
    }
    out[o++] = *p++; /* '%' */
    if (*p == '%') {
      out[o++] = *p++;
      continue;
    }
    /* flags, width, precision ('*' takes an int argument either way) */
    while (*p && (*p == '-' || *p == '+' || *p == ' ' || *p == '#' || *p == '0' || *p == '*' || *p == '.' ||
                  (*p >= '0' && *p <= '9'))) {
      if (o + 3 >= cap) return fmt;
      out[o++] = *p++;
    }
    if (*p == 'z' || *p == 't') {
      out[o++] = 'l';
      p++;
    } else if (*p == 'j') {
      out[o++] = 'l';
      out[o++] = 'l';
      p++;
    }
  }
  out[o] = '\0';
  return out;
}

int __wrap_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap) {
  char f[CMLENS_FORMAT_MAX];
  return __real_vsnprintf(buf, n, c99_format(fmt, f, sizeof(f)), ap);
}

int __wrap_vsprintf(char *buf, const char *fmt, va_list ap) {
  char f[CMLENS_FORMAT_MAX];
  return __real_vsprintf(buf, c99_format(fmt, f, sizeof(f)), ap);
}

int __wrap_vfprintf(FILE *stream, const char *fmt, va_list ap) {
  char f[CMLENS_FORMAT_MAX];
  return __real_vfprintf(stream, c99_format(fmt, f, sizeof(f)), ap);
}

int __wrap_vprintf(const char *fmt, va_list ap) {
  char f[CMLENS_FORMAT_MAX];
  return __real_vprintf(c99_format(fmt, f, sizeof(f)), ap);
}

int __wrap_snprintf(char *buf, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = __wrap_vsnprintf(buf, n, fmt, ap);
  va_end(ap);
  return r;
}

int __wrap_sprintf(char *buf, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = __wrap_vsprintf(buf, fmt, ap);
  va_end(ap);
  return r;
}

int __wrap_fprintf(FILE *stream, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = __wrap_vfprintf(stream, fmt, ap);
  va_end(ap);
  return r;
}

int __wrap_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = __wrap_vprintf(fmt, ap);
  va_end(ap);
  return r;
}
