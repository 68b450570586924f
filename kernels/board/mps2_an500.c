/* QEMU mps2-an500: MPS2 FPGA image AN500 with Cortex-M7 (memory map: linker/mps2_an500.ld). */
#include "cmlens/board.h"

const cmlens_board_t cmlens_board = {
    .name = "mps2-an500",
    .cpu = "cortex-m7",
    .simulator = "qemu",
    .uart_base = 0x40004000u, /* UART0 */
    .uart_clock_hz = 25000000u,
    .baud = 115200u,
    .eot_on_exit = 0,
};
