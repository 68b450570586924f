/* Arm CMSDK APB UART, transmit only, polled. Register map (CMSDK TRM): DATA 0x00, STATE 0x04 (bit 0: TX
 * buffer full), CTRL 0x08 (bit 0: TX enable), INTSTATUS 0x0C, BAUDDIV 0x10 (must be >= 16). */
#include <stdint.h>

#include "cmlens/board.h"

#define UART_DATA(base) (*(volatile uint32_t *)((base) + 0x00u))
#define UART_STATE(base) (*(volatile uint32_t *)((base) + 0x04u))
#define UART_CTRL(base) (*(volatile uint32_t *)((base) + 0x08u))
#define UART_BAUDDIV(base) (*(volatile uint32_t *)((base) + 0x10u))
#define UART_STATE_TXFULL 0x1u
#define UART_CTRL_TXEN 0x1u

static int uart_ready;

void cmlens_uart_init(void) {
  uintptr_t base = cmlens_board.uart_base;
  uint32_t div = cmlens_board.uart_clock_hz / (cmlens_board.baud ? cmlens_board.baud : 115200u);
  if (div < 16u) div = 16u;
  UART_BAUDDIV(base) = div;
  UART_CTRL(base) = UART_CTRL_TXEN;
  uart_ready = 1;
}

void cmlens_uart_putc(char c) {
  uintptr_t base = cmlens_board.uart_base;
  if (!uart_ready) cmlens_uart_init(); /* a fault before Reset_Handler reached cmlens_uart_init() */
  while (UART_STATE(base) & UART_STATE_TXFULL) {
  }
  UART_DATA(base) = (uint32_t)(unsigned char)c;
}

void cmlens_uart_write(const char *s, unsigned len) {
  for (unsigned i = 0; i < len; i++) {
    if (s[i] == '\n') cmlens_uart_putc('\r');
    cmlens_uart_putc(s[i]);
  }
}

void cmlens_uart_puts(const char *s) {
  while (*s) cmlens_uart_putc(*s++);
}
