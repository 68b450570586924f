/* Stack and heap high-water marks, so a board's RAM can be sized to what a firmware really uses.
 *
 * Reset_Handler paints the main stack (everything below the current stack pointer, down to
 * __StackLimit) with CMLENS_STACK_PAINT before any other code runs; _sbrk (syscalls.c) records the
 * highest break it handed out and how many requests it refused. At exit (cmlens_exit, also after a
 * fault) one line goes straight to the UART, without stdio or the heap:
 *
 *   CMLENS MEMORY: stack_used=N stack_size=N heap_used=N heap_size=N heap_refused=N
 *
 * stack_used: bytes from __StackTop down to the deepest word that is no longer the paint (a word the
 * firmware happened to write with the paint value is missed: a low bound by at most that word);
 * stack_used == stack_size means the stack reached its limit (it may have overflowed).
 * heap_used: the sbrk high-water mark (newlib's malloc takes the heap in page-sized steps), so the
 * .heap section must be at least this big. backend_core/simulate/uart.py parses the line. */
#include <stdint.h>

#include "cmlens/board.h"

#define CMLENS_STACK_PAINT 0xC5A5C5A5u

extern uint32_t __StackTop;
extern uint32_t __StackLimit;
extern char end;
extern char __HeapLimit;

uintptr_t cmlens_heap_high = 0;   /* highest sbrk break (absolute address; 0: never called) */
uint32_t cmlens_heap_refused = 0; /* sbrk requests refused for lack of heap */

/* Runs first in Reset_Handler, on the stack it paints: only the words below the current frame (minus a
 * margin for this function's own frame) are written. A plain word loop: no library call (memset is not
 * usable before .data/.bss exist), no vector code (MVE is only on after CPACR). */
__attribute__((optimize("no-tree-loop-distribute-patterns", "no-tree-vectorize"), noinline))
void cmlens_paint_stack(void) {
  uint32_t sp;
  __asm volatile("mov %0, sp" : "=r"(sp));
  volatile uint32_t *p = &__StackLimit;
  volatile uint32_t *stop = (volatile uint32_t *)((sp - 64u) & ~3u);
  while (p < stop) *p++ = CMLENS_STACK_PAINT;
}

uint32_t cmlens_stack_used(void) {
  const volatile uint32_t *p = &__StackLimit;
  const volatile uint32_t *top = &__StackTop;
  while (p < top && *p == CMLENS_STACK_PAINT) p++;
  return (uint32_t)((uintptr_t)top - (uintptr_t)p);
}

uint32_t cmlens_heap_used(void) {
  return cmlens_heap_high ? (uint32_t)(cmlens_heap_high - (uintptr_t)&end) : 0u;
}

static void put_field(const char *label, uint32_t v) {
  char buf[12];
  int i = (int)sizeof(buf) - 1;
  buf[i] = '\0';
  do {
    buf[--i] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v && i > 0);
  cmlens_uart_puts(label);
  cmlens_uart_puts(&buf[i]);
}

void cmlens_report_memory(void) {
  cmlens_uart_puts("\r\nCMLENS MEMORY:");
  put_field(" stack_used=", cmlens_stack_used());
  put_field(" stack_size=", (uint32_t)((uintptr_t)&__StackTop - (uintptr_t)&__StackLimit));
  put_field(" heap_used=", cmlens_heap_used());
  put_field(" heap_size=", (uint32_t)((uintptr_t)&__HeapLimit - (uintptr_t)&end));
  put_field(" heap_refused=", cmlens_heap_refused);
  cmlens_uart_puts("\r\n");
}
