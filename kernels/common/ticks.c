/* A 64-bit tick counter from SysTick, and ExecuTorch's PAL tick functions on top of it.
 *
 * SysTick runs from the processor clock (CSR.CLKSOURCE=1, cmlens_board.cpu_clock_hz) with the full 24-bit
 * reload; its interrupt counts the wraps. Under QEMU with `-icount shift=N` the virtual clock advances
 * exactly 2^N ns per executed instruction, so SysTick then counts instructions:
 *     ticks = floor(instructions * 2^N * cpu_clock_hz / 1e9)
 * boards.json picks N so that 2^N ns >= one SysTick period (a tick is at most one instruction); then
 *     instructions = ceil(ticks * 1e9 / (cpu_clock_hz * 2^N))
 * recovers the instruction count exactly. That is what cmlens_ticks_read() (and so ExecuTorch's
 * et_pal_current_ticks(), through the linker's --wrap) returns on a QEMU board: instructions executed
 * (QEMU -icount), not cycles. On other boards (FVP) it returns raw SysTick ticks. */
#include <stdint.h>

#include "cmlens/board.h"

#define CMLENS_REG(addr) (*(volatile uint32_t *)(addr))
#define SYST_CSR CMLENS_REG(0xE000E010u)
#define SYST_RVR CMLENS_REG(0xE000E014u)
#define SYST_CVR CMLENS_REG(0xE000E018u)
#define SCB_ICSR CMLENS_REG(0xE000ED04u)
#define SYST_CSR_ENABLE (1u << 0)
#define SYST_CSR_TICKINT (1u << 1)
#define SYST_CSR_CLKSOURCE (1u << 2)
#define ICSR_PENDSTSET (1u << 26)
#define SYST_PERIOD (1u << 24) /* ticks per wrap: RVR + 1 */

static volatile uint32_t wraps; /* times the counter reached 0 */
static int started;
static uint64_t to_instr_num = 1, to_instr_den = 1; /* instructions = ceil(ticks * num / den) */
static int to_instr_shift = -1; /* log2(den) when den is a power of two (every board so far): no division */

static uint64_t gcd_u64(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static int counts_instructions(void) { return cmlens_board.icount_shift >= 0 && cmlens_board.cpu_clock_hz; }

void cmlens_ticks_init(void) {
  if (counts_instructions()) {
    uint64_t num = 1000000000u, den = (uint64_t)cmlens_board.cpu_clock_hz << cmlens_board.icount_shift;
    uint64_t g = gcd_u64(num, den);
    to_instr_num = num / g;
    to_instr_den = den / g;
    to_instr_shift = -1;
    if ((to_instr_den & (to_instr_den - 1u)) == 0) {
      to_instr_shift = 0;
      while ((1ull << to_instr_shift) < to_instr_den) to_instr_shift++;
    }
  }
  wraps = 0;
  SYST_CSR = 0;
  SYST_RVR = SYST_PERIOD - 1u;
  SYST_CVR = 0; /* clears the counter; it loads RVR on the first tick (that load pends no interrupt) */
  SYST_CSR = SYST_CSR_CLKSOURCE | SYST_CSR_TICKINT | SYST_CSR_ENABLE;
  started = 1;
}

void SysTick_Handler(void) { wraps = wraps + 1u; }

/* The counter reads RVR, RVR-1, ..., 1, 0, RVR, ... and the interrupt pends when it reaches 0. Count
 * from that moment: 0 -> offset 0, v > 0 -> offset 2^24 - v, so the count is monotonic even in the tick
 * where the counter sits at 0 and the interrupt has (or has not yet) run. */
uint64_t cmlens_systick_read(void) {
  if (!started) return 0;
  uint32_t primask;
  __asm volatile("mrs %0, primask" : "=r"(primask));
  __asm volatile("cpsid i" ::: "memory");
  uint32_t hi = wraps;
  uint32_t v = SYST_CVR;
  if (SCB_ICSR & ICSR_PENDSTSET) { /* reached 0, handler not run yet (interrupts were masked) */
    v = SYST_CVR;
    hi++;
  }
  __asm volatile("msr primask, %0" ::"r"(primask) : "memory");
  uint32_t offset = v ? SYST_PERIOD - v : 0u;
  return (uint64_t)hi * SYST_PERIOD + offset;
}

uint64_t cmlens_ticks_read(void) {
  uint64_t t = cmlens_systick_read();
  if (!counts_instructions()) return t;
  /* A read costs instructions that ETDump's events then include: keep the common case division-free. */
  if (to_instr_shift >= 0) return (t * to_instr_num + to_instr_den - 1u) >> to_instr_shift;
  return (t * to_instr_num + to_instr_den - 1u) / to_instr_den;
}

cmlens_tick_ratio_t cmlens_ticks_to_ns(void) {
  cmlens_tick_ratio_t r;
  if (counts_instructions()) { /* one instruction = 2^N ns of QEMU's virtual time */
    r.numerator = 1ull << cmlens_board.icount_shift;
    r.denominator = 1;
  } else {
    uint64_t num = 1000000000u, den = cmlens_board.cpu_clock_hz ? cmlens_board.cpu_clock_hz : 1u;
    uint64_t g = gcd_u64(num, den);
    r.numerator = num / g;
    r.denominator = den / g;
  }
  return r;
}

const char *cmlens_ticks_unit(void) {
  return counts_instructions() ? "instructions executed (QEMU -icount), not cycles" : "SysTick ticks";
}

/* ExecuTorch's PAL (runtime/platform/platform.h): the runtime's references are redirected here. */
uint64_t __wrap_et_pal_current_ticks(void) { return cmlens_ticks_read(); }

cmlens_tick_ratio_t __wrap_et_pal_ticks_to_ns_multiplier(void) { return cmlens_ticks_to_ns(); }
