/* CortexM Lens board layer: what a firmware (the self-test or ExecuTorch's arm_executor_runner.cpp) needs
 * from a bare-metal Cortex-M board. Everything here is plain C and usable from C++. */
#ifndef CMLENS_BOARD_H
#define CMLENS_BOARD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One board: filled in by exactly one board/<name>.c. */
typedef struct {
  const char *name;        /* e.g. "mps3-an547" */
  const char *cpu;         /* e.g. "cortex-m55" */
  const char *simulator;   /* "qemu" or "fvp" */
  uintptr_t uart_base;     /* CMSDK APB UART0 */
  uint32_t uart_clock_hz;  /* peripheral clock feeding the UART */
  uint32_t baud;
  uint8_t eot_on_exit;     /* FVP: send 0x04 so mps3_board.uart0.shutdown_on_eot=1 stops the model */
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

/* Exit status through semihosting (SYS_EXIT_EXTENDED), after an EOT byte on FVP boards. */
void cmlens_exit(int status) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif

#endif /* CMLENS_BOARD_H */
