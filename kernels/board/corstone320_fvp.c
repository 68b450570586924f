/* Arm Corstone-320 FVP (FVP_Corstone_SSE-320) with Cortex-M85. UART0 address taken from the SSE-300 family map; untested here (no FVP). */
#include "cmlens/board.h"

const cmlens_board_t cmlens_board = {
    .name = "corstone-320-fvp",
    .cpu = "cortex-m85",
    .simulator = "fvp",
    .uart_base = 0x49303000u, /* UART0 */
    .uart_clock_hz = 25000000u,
    .baud = 115200u,
    .eot_on_exit = 1,
};
