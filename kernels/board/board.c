/* The board description, the same file for every board: the constants come from the board's row of
 * kernels/boards.json as compile definitions (kernels/cmake/boards.cmake). */
#include "cmlens/board.h"

#if !defined(CMLENS_BOARD_NAME) || !defined(CMLENS_BOARD_UART_BASE) || !defined(CMLENS_BOARD_CPU_CLOCK_HZ)
#error "board.c is configured by kernels/cmake/boards.cmake from kernels/boards.json"
#endif

const cmlens_board_t cmlens_board = {
    .name = CMLENS_BOARD_NAME,
    .cpu = CMLENS_BOARD_CPU,
    .simulator = CMLENS_BOARD_SIMULATOR,
    .uart_base = CMLENS_BOARD_UART_BASE,
    .uart_clock_hz = CMLENS_BOARD_UART_CLOCK_HZ,
    .baud = 115200u,
    .eot_on_exit = CMLENS_BOARD_EOT_ON_EXIT,
    .cpu_clock_hz = CMLENS_BOARD_CPU_CLOCK_HZ,
    .icount_shift = CMLENS_BOARD_ICOUNT_SHIFT,
};
