/* QEMU mps2-an505: MPS2 FPGA image AN505, IoT Kit SSE-200 with Cortex-M33, code runs Secure (linker/mps2_an505.ld). */
#include "cmlens/board.h"

const cmlens_board_t cmlens_board = {
    .name = "mps2-an505",
    .cpu = "cortex-m33",
    .simulator = "qemu",
    .uart_base = 0x40200000u, /* UART0 */
    .uart_clock_hz = 25000000u,
    .baud = 115200u,
    .eot_on_exit = 0,
};
