/* The 64-bit tick counter across SysTick wraps, read as densely as possible: once with interrupts masked
 * (the wrap interrupt stays pending; cmlens_systick_read() must see it), once with them enabled (the
 * handler runs between reads). Every read must be >= the one before and only a few instructions later.
 * Meant for QEMU with -icount (deterministic, one tick per instruction); exit status 0 when both hold.
 * Prints: ticks_wrap: <phase> reads=N wraps=W backwards=B max_step=S */
#include <stdint.h>
#include <stdio.h>

#include "cmlens/board.h"

#define PERIOD (1ull << 24) /* SysTick ticks per wrap */
#define MAX_STEP 1000u      /* instructions between two reads in the loop below: far fewer */

typedef struct {
  uint32_t reads, backwards;
  uint64_t max_step, wraps;
} phase_t;

static phase_t read_for(uint64_t systicks) {
  phase_t p = {0, 0, 0, 0};
  uint64_t start = cmlens_systick_read(), prev = cmlens_ticks_read();
  for (;;) {
    uint64_t raw = cmlens_systick_read();
    uint64_t now = cmlens_ticks_read();
    p.reads++;
    if (now < prev) {
      p.backwards++;
    } else if (now - prev > p.max_step) {
      p.max_step = now - prev;
    }
    prev = now;
    if (raw - start >= systicks) {
      p.wraps = raw / PERIOD - start / PERIOD;
      return p;
    }
  }
}

static int report(const char *name, phase_t p) {
  printf("ticks_wrap: %s reads=%lu wraps=%llu backwards=%lu max_step=%llu\n", name, (unsigned long)p.reads,
         (unsigned long long)p.wraps, (unsigned long)p.backwards, (unsigned long long)p.max_step);
  return p.backwards == 0 && p.max_step < MAX_STEP && p.wraps == 1;
}

int main(void) {
  printf("cmlens ticks_wrap: board=%s unit=%s\n", cmlens_board.name, cmlens_ticks_unit());
  /* Start half way through a period so that 3/4 of a period masked crosses exactly one wrap. */
  while (cmlens_systick_read() % PERIOD < PERIOD / 2) {
  }
  __asm volatile("cpsid i" ::: "memory");
  phase_t masked = read_for(PERIOD * 3 / 4);
  __asm volatile("cpsie i" ::: "memory");
  phase_t unmasked = read_for(PERIOD * 3 / 4);
  int ok = report("masked", masked);
  ok &= report("unmasked", unmasked);
  printf("ticks_wrap: %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
