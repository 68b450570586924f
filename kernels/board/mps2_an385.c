/* QEMU mps2-an385: MPS2 FPGA image AN385 with Cortex-M3; same memory map as AN386 (linker/mps2_an386.ld). */
#include "cmlens/board.h"

const cmlens_board_t cmlens_board = {
    .name = "mps2-an385",
    .cpu = "cortex-m3",
    .simulator = "qemu",
    .uart_base = 0x40004000u, /* UART0 */
    .uart_clock_hz = 25000000u,
    .baud = 115200u,
    .eot_on_exit = 0,
};
