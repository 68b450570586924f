/* QEMU mps3-an547: MPS3 FPGA image AN547, Corstone SSE-300 with Cortex-M55 (memory map: linker/mps3_an547.ld). */
#include "cmlens/board.h"

const cmlens_board_t cmlens_board = {
    .name = "mps3-an547",
    .cpu = "cortex-m55",
    .simulator = "qemu",
    .uart_base = 0x49303000u, /* UART0 */
    .uart_clock_hz = 32000000u,
    .baud = 115200u,
    .eot_on_exit = 0,
};
