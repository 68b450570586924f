/* Fault reporting. Every fault prints exactly one line to the UART, then exits through semihosting:
 *
 *   CMLENS FAULT: <HardFault|MemManage|BusFault|UsageFault|IRQ<n>|...> cfsr=0x... hfsr=0x... mmfar=0x...
 *       bfar=0x... pc=0x... lr=0x... xpsr=0x... sp=0x... exc_return=0x...
 *
 * (all on one line; values are 8 hex digits). backend_core/simulate/uart.py parses it. */
#ifndef CMLENS_FAULT_H
#define CMLENS_FAULT_H

#define CMLENS_FAULT_PREFIX "CMLENS FAULT: "
/* Exit status after a fault: 100 + exception number (HardFault 103, MemManage 104, BusFault 105,
 * UsageFault 106, SecureFault 107, unexpected IRQ n: 116 + n capped at 255). */
#define CMLENS_EXIT_FAULT_BASE 100

#endif /* CMLENS_FAULT_H */
