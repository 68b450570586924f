/* Arm Corstone-300 FVP (FVP_Corstone_SSE-300_Ethos-U55): same SSE-300 map as QEMU mps3-an547. Not runnable here (no FVP). */
#include "cmlens/board.h"

const cmlens_board_t cmlens_board = {
    .name = "corstone-300-fvp",
    .cpu = "cortex-m55",
    .simulator = "fvp",
    .uart_base = 0x49303000u, /* UART0 */
    .uart_clock_hz = 25000000u,
    .baud = 115200u,
    .eot_on_exit = 1,
};
