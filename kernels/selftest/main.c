/* CortexM Lens self-test firmware: int8 arithmetic against known answers (computed on the host with
 * exact integer arithmetic), core feature checks (FPU, DSP, MVE), the cycle counter, and the same UART
 * line protocol as ExecuTorch's Arm runner:
 *   TEST: selftest index[N] Test_result: PASS|FAIL
 *   Inference runtime: N CPU cycles total (X per inference)     -- or "cycles: unavailable (reason)"
 * Two board-layer checks that the host reads from their own lines:
 *   printf: <a message formatted like ExecuTorch's ET_LOG, with %zu, %zd and %s>
 *   ticks: workload[1x] ... / ticks: workload[2x] ...  -- et_pal_current_ticks() around a fixed loop
 * Exit status (semihosting): 0 when every test passes, 1 otherwise. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "cmlens/board.h"
#include "int8_kernels.h"

#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>
#endif
#if defined(__ARM_FEATURE_SIMD32) || defined(__ARM_FEATURE_DSP)
#include <arm_acle.h>
#endif

#if defined(CMLENS_SELFTEST_INJECT_FAILURE)
#define INJECT 1 /* corrupts one known answer: checks that failures are reported */
#else
#define INJECT 0
#endif

typedef int (*test_fn)(char *detail, size_t n); /* returns the number of mismatches */

static int test_requantize(char *detail, size_t n) {
  static const int32_t cases[][4] = {
      /* value, multiplier, shift, expected */
      {1000, 1073741824, 0, 500},
      {-1001, 1073741824, 0, -500},
      {123456, 1518500250, -7, 682},
      {-123456, 1518500250, -7, -682},
      {77, 2040109466, 2, 293},
      {-77, 2040109466, 2, -293},
      {0, 1073741824, -3, 0},
      {2147483647, 1073741824, -1, 536870912},
      {-2147483647, 1073741824, -1, -536870912},
      {5, 1717986918, -1, 2},
      {-5, 1717986918, -1, -2},
      {300000, 1300000000, -12, 44 + INJECT},
  };
  int bad = 0, total = (int)(sizeof(cases) / sizeof(cases[0]));
  for (int i = 0; i < total; i++) {
    int32_t got = st_requantize(cases[i][0], cases[i][1], cases[i][2]);
    if (got != cases[i][3]) {
      if (!bad) snprintf(detail, n, "case %d: got %ld want %ld", i, (long)got, (long)cases[i][3]);
      bad++;
    }
  }
  if (!bad) snprintf(detail, n, "%d cases", total);
  return bad;
}

static const int8_t sat_a[16] = {53, 0, 108, -73, 60, 23, -110, 93, -82, -22, 46, 57, -53, 46, 13, -81};
static const int8_t sat_b[16] = {31, 34, 28, -38, -88, -52, 30, 119, -46, -104, -87, 79, -112, -7, 48, 0};

static int test_sat_add(char *detail, size_t n) {
  static const int8_t want[16] = {84, 34, 127, -111, -28, -29, -80, 127, -128, -126, -41, 127, -128, 39, 61, -81};
  int bad = 0;
  for (int i = 0; i < 16; i++) {
    if (st_sat_add_s8(sat_a[i], sat_b[i]) != want[i]) bad++;
  }
#if defined(__ARM_FEATURE_SIMD32)
  /* The same with the DSP extension's QADD8 (4 lanes at a time). */
  for (int i = 0; i < 16; i += 4) {
    int8x4_t a, b, r;
    memcpy(&a, &sat_a[i], 4);
    memcpy(&b, &sat_b[i], 4);
    r = __qadd8(a, b);
    if (memcmp(&r, &want[i], 4) != 0) bad++;
  }
  snprintf(detail, n, "16 lanes scalar + QADD8, %d mismatches", bad);
#else
  snprintf(detail, n, "16 lanes scalar, %d mismatches", bad);
#endif
  return bad;
}

static int test_dot(char *detail, size_t n) {
  const int32_t want = 21531;
  int32_t got = st_dot_s8(sat_a, sat_b, 16);
  int bad = got != want;
#if defined(__ARM_FEATURE_MVE)
  int8x16_t va = vld1q_s8(sat_a), vb = vld1q_s8(sat_b);
  int32_t mve = vmladavq_s8(va, vb); /* MVE: usable only after CPACR enabled it in Reset_Handler */
  bad += mve != want;
  snprintf(detail, n, "scalar %ld, MVE VMLADAV %ld, want %ld", (long)got, (long)mve, (long)want);
#else
  snprintf(detail, n, "scalar %ld, want %ld", (long)got, (long)want);
#endif
  return bad;
}

static int test_fully_connected(char *detail, size_t n) {
  static const int8_t in[8] = {2, 55, -114, 110, -1, -102, -48, -71};
  static const int8_t w[24] = {62,  112, -2,  66,  -76,  -1,  -122, -18, 80,  15,  -35, 71,
                               -47, -92, -57, 99,  -64, -61, -128, -126, -21, -18, -44, -43};
  static const int32_t bias[3] = {-816, -716, 1938};
  static const int8_t want[3] = {43, 36, 6};
  int8_t out[3];
  st_fully_connected_s8(in, w, bias, 8, 3, 3, -5, 1288490189, -8, out);
  int bad = 0;
  for (int i = 0; i < 3; i++) bad += out[i] != want[i];
  snprintf(detail, n, "8->3, out %d %d %d", out[0], out[1], out[2]);
  return bad;
}

static int test_conv(char *detail, size_t n) {
  static const int8_t x[25] = {-27, -24, -35, -28, 68,  24,  -117, 56,  84, -44, -54, 7,  -95,
                               41,  26,  -127, 45, -95, 30,  53,   28,  118, 33, -34, 118};
  static const int8_t k[18] = {113, -38, -99, 3, -117, 55, 78, -119, 86,
                               59,  64,  -124, 103, -105, -36, -28, -68, -3};
  static const int32_t bias[2] = {2572, 642};
  static const int32_t mult[2] = {1717986918, 1395864371};
  static const int32_t shift[2] = {-9, -10};
  static const int8_t want[18] = {3, -2, 18, -21, -54, -21, -48, -21, 7, -11, -9, -12, -31, -21, 20, -13, -3, -25};
  int8_t out[18];
  st_conv3x3_s8(x, 5, 5, k, bias, 2, 128, -1, mult, shift, out);
  int bad = 0;
  for (int i = 0; i < 18; i++) bad += out[i] != want[i];
  snprintf(detail, n, "5x5x1 -> 3x3x2 per-channel, %d mismatches", bad);
  return bad;
}

#if defined(__ARM_FP)
static int test_float(char *detail, size_t n) {
  /* Exercises the FPU (enabled through CPACR by Reset_Handler); a disabled FPU faults (NOCP). */
  volatile float a = 1.5f, b = -2.25f;
  float r = a * b + 0.375f; /* -3.0 exactly */
  snprintf(detail, n, "1.5 * -2.25 + 0.375 = %.3f", (double)r);
  return r != -3.0f;
}
#endif

static const struct {
  const char *name;
  test_fn fn;
} tests[] = {
    {"requantize", test_requantize},
    {"saturating_add_s8", test_sat_add},
    {"dot_s8", test_dot},
    {"fully_connected_s8", test_fully_connected},
    {"conv3x3_s8", test_conv},
#if defined(__ARM_FP)
    {"fpu", test_float},
#endif
};

static const char *features(void) {
  return ""
#if defined(__ARM_FP)
         " fpu"
#endif
#if defined(__ARM_FEATURE_DSP)
         " dsp"
#endif
#if defined(__ARM_FEATURE_MVE)
         " mve"
#endif
      ;
}

/* ExecuTorch's runtime/platform/log.cpp formats every ET_LOG message with vsnprintf into a buffer: do
 * the same, with the conversions its messages use (newlib-nano printed "zu" for %zu and shifted the
 * remaining arguments: "KernelCall failed at instruction zu:zu in operator \xef\xbf\xbd.Mk"). */
static void print_like_et_log(const char *format, ...) {
  char buffer[256];
  va_list args;
  va_start(args, format);
  vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  printf("printf: %s\n", buffer);
}

/* ExecuTorch's PAL tick functions (runtime/platform/platform.h), declared with the board layer's types:
 * the link's --wrap sends these calls to the board layer, exactly as it does for ExecuTorch's runtime. */
uint64_t et_pal_current_ticks(void);
cmlens_tick_ratio_t et_pal_ticks_to_ns_multiplier(void);

/* A fixed workload for the tick counter: FNV-1a over the loop index (no closed form to optimise into). */
static volatile uint32_t workload_sink;
__attribute__((noinline)) static void workload(uint32_t iterations) {
  uint32_t h = 2166136261u;
  for (uint32_t i = 0; i < iterations; i++) h = (h ^ i) * 16777619u;
  workload_sink = h;
}

#define WORKLOAD_ITERATIONS 2000000u /* 1x; 2x crosses a 24-bit SysTick wrap on every board */

static void report_ticks(void) {
  uint64_t counts[2];
  for (int k = 0; k < 2; k++) {
    uint64_t t0 = et_pal_current_ticks();
    workload(WORKLOAD_ITERATIONS * (uint32_t)(k + 1));
    counts[k] = et_pal_current_ticks() - t0;
  }
  cmlens_tick_ratio_t ns = et_pal_ticks_to_ns_multiplier();
  printf("ticks: unit=%s icount_shift=%d ns_per_tick=%llu/%llu\n", cmlens_ticks_unit(),
         (int)cmlens_board.icount_shift, (unsigned long long)ns.numerator, (unsigned long long)ns.denominator);
  for (int k = 0; k < 2; k++) {
    printf("ticks: workload[%dx] iterations=%lu ticks=%llu\n", k + 1,
           (unsigned long)(WORKLOAD_ITERATIONS * (uint32_t)(k + 1)), (unsigned long long)counts[k]);
  }
}

int main(void) {
  printf("cmlens selftest: board=%s cpu=%s sim=%s features:%s\n", cmlens_board.name, cmlens_board.cpu,
         cmlens_board.simulator, features());
  int have_cycles = cmlens_cycles_init();
  int n = (int)(sizeof(tests) / sizeof(tests[0])), failed = 0;
  uint32_t start = cmlens_cycles_read();
  for (int i = 0; i < n; i++) {
    char detail[96] = "";
    int bad = tests[i].fn(detail, sizeof(detail));
    failed += bad != 0;
    printf("selftest index[%d] %s: %s\n", i, tests[i].name, detail);
    printf("TEST: selftest index[%d] Test_result: %s\n", i, bad ? "FAIL" : "PASS");
  }
  uint32_t cycles = cmlens_cycles_read() - start;
  if (have_cycles) {
    printf("Inference runtime: %lu CPU cycles total (%.2f per inference)\n", (unsigned long)cycles,
           (double)cycles);
    printf("NOTE: simulator cycle counts are not cycle-accurate\n");
  } else {
    printf("cycles: unavailable (%s)\n", cmlens_cycles_unavailable_reason());
  }
  print_like_et_log("%zu input tensors have different dim orders; instruction %zu:%zd in operator %s",
                    (size_t)3, (size_t)17, (ssize_t)-2, "aten::_softmax.out");
  report_ticks();
  printf("selftest: %d/%d passed\n", n - failed, n);
  return failed ? 1 : 0;
}
