/* DWT cycle counter (CYCCNT). Present on Cortex-M3/M4/M7/M33/M35P/M55/M85, absent on M0/M0+/M23.
 * QEMU reads the DWT as zero (it does not model it), so the counter is probed: enabled, then checked
 * to advance. Counts from simulators are not cycle-accurate either way. */
#include <stdint.h>

#include "cmlens/board.h"

#define CMLENS_REG(addr) (*(volatile uint32_t *)(addr))
#define DEMCR CMLENS_REG(0xE000EDFCu)
#define DWT_CTRL CMLENS_REG(0xE0001000u)
#define DWT_CYCCNT CMLENS_REG(0xE0001004u)
#define DEMCR_TRCENA (1u << 24)
#define DWT_CTRL_CYCCNTENA (1u << 0)
#define DWT_CTRL_NOCYCCNT (1u << 25)

static int cycles_ok;
static const char *cycles_reason = "cycle counter not initialised";

int cmlens_cycles_init(void) {
#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
  cycles_reason = "this core has no DWT cycle counter";
  cycles_ok = 0;
#else
  DEMCR |= DEMCR_TRCENA;
  __asm volatile("dsb 0xF\n\tisb 0xF" ::: "memory");
  if (DWT_CTRL & DWT_CTRL_NOCYCCNT) {
    cycles_reason = "DWT has no cycle counter on this core";
    cycles_ok = 0;
    return 0;
  }
  DWT_CYCCNT = 0;
  DWT_CTRL |= DWT_CTRL_CYCCNTENA;
  uint32_t a = DWT_CYCCNT;
  for (volatile int i = 0; i < 64; i++) {
  }
  uint32_t b = DWT_CYCCNT;
  cycles_ok = (a != b);
  cycles_reason = cycles_ok ? "" : "DWT cycle counter does not advance (not modelled by this simulator)";
#endif
  return cycles_ok;
}

int cmlens_cycles_available(void) { return cycles_ok; }

uint32_t cmlens_cycles_read(void) {
#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
  return 0;
#else
  return cycles_ok ? DWT_CYCCNT : 0u;
#endif
}

const char *cmlens_cycles_unavailable_reason(void) { return cycles_reason; }
