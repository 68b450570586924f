/* CortexM Lens board layer: what a firmware (the self-test or ExecuTorch's arm_executor_runner.cpp) needs
 * from a bare-metal Cortex-M board. Everything here is plain C and usable from C++. */
#ifndef CMLENS_BOARD_H
#define CMLENS_BOARD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One board: board/board.c, filled in from the board's row of kernels/boards.json (compile definitions). */
typedef struct {
  const char *name;        /* e.g. "mps3-an547" */
  const char *cpu;         /* e.g. "cortex-m55" */
  const char *simulator;   /* "qemu" or "fvp" */
  uintptr_t uart_base;     /* CMSDK APB UART0 */
  uint32_t uart_clock_hz;  /* peripheral clock feeding the UART */
  uint32_t baud;
  uint8_t eot_on_exit;     /* FVP: send 0x04 so mps3_board.uart0.shutdown_on_eot=1 stops the model */
  uint32_t cpu_clock_hz;   /* processor clock: SysTick counts at this rate (CSR.CLKSOURCE=1) */
  int8_t icount_shift;     /* QEMU -icount shift=N the host uses (1 instruction = 2^N ns); -1: not QEMU */
} cmlens_board_t;

extern const cmlens_board_t cmlens_board;

/* UART (CMSDK APB UART): polled, transmit only. */
void cmlens_uart_init(void);
void cmlens_uart_putc(char c);
void cmlens_uart_write(const char *s, unsigned len);
/* Writes a NUL-terminated string straight to the UART (no stdio, no heap): safe inside fault handlers. */
void cmlens_uart_puts(const char *s);

/* Cycle counter (DWT CYCCNT). cmlens_cycles_init() probes it: simulators such as QEMU do not model it. */
int cmlens_cycles_init(void);            /* 1 when the counter is present and advancing */
int cmlens_cycles_available(void);
uint32_t cmlens_cycles_read(void);
const char *cmlens_cycles_unavailable_reason(void);

/* Tick counter for profiling: SysTick (processor clock, 24 bits) extended to 64 bits by its wrap
 * interrupt, started by Reset_Handler. On a QEMU board (icount_shift >= 0) the value is converted to
 * INSTRUCTIONS EXECUTED, which is exact and deterministic when QEMU runs with `-icount shift=N`
 * (N = cmlens_board.icount_shift; without -icount it follows host time and means nothing). On other
 * boards it is raw SysTick ticks. ExecuTorch's et_pal_current_ticks()/et_pal_ticks_to_ns_multiplier()
 * resolve to the __wrap_ functions below (the board layer links with --wrap=et_pal_...). */
typedef struct {
  uint64_t numerator;
  uint64_t denominator;
} cmlens_tick_ratio_t;      /* the layout of ExecuTorch's et_tick_ratio_t */

void cmlens_ticks_init(void);
uint64_t cmlens_ticks_read(void);            /* instructions (QEMU) or SysTick ticks (elsewhere) */
uint64_t cmlens_systick_read(void);          /* raw 64-bit SysTick ticks since cmlens_ticks_init() */
cmlens_tick_ratio_t cmlens_ticks_to_ns(void); /* ns = ticks * numerator / denominator */
const char *cmlens_ticks_unit(void);         /* "instructions (QEMU -icount shift=N)" or "SysTick ticks" */
uint64_t __wrap_et_pal_current_ticks(void);
cmlens_tick_ratio_t __wrap_et_pal_ticks_to_ns_multiplier(void);

/* Stack and heap high-water marks (common/memmark.c): Reset_Handler paints the stack first thing;
 * cmlens_exit() prints `CMLENS MEMORY: stack_used=N stack_size=N heap_used=N heap_size=N heap_refused=N`. */
void cmlens_paint_stack(void);
uint32_t cmlens_stack_used(void);
uint32_t cmlens_heap_used(void);
void cmlens_report_memory(void);

/* Exit status through semihosting (SYS_EXIT_EXTENDED), after an EOT byte on FVP boards. */
void cmlens_exit(int status) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif

#endif /* CMLENS_BOARD_H */
