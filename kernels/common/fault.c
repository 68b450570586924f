/* Fault handlers: one parseable line with the fault registers, then exit through semihosting.
 * Line format: see include/cmlens/fault.h. Output goes straight to the UART (no stdio, no heap), so a
 * fault inside printf or malloc is still reported. */
#include <stdint.h>

#include "cmlens/board.h"
#include "cmlens/fault.h"

#define CMLENS_REG(addr) (*(volatile uint32_t *)(addr))
#define SCB_ICSR CMLENS_REG(0xE000ED04u)
#define SCB_CFSR CMLENS_REG(0xE000ED28u)
#define SCB_HFSR CMLENS_REG(0xE000ED2Cu)
#define SCB_MMFAR CMLENS_REG(0xE000ED34u)
#define SCB_BFAR CMLENS_REG(0xE000ED38u)

#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
#define CMLENS_HAS_FAULT_REGS 0 /* Armv6-M / Armv8-M baseline: no CFSR/HFSR/MMFAR/BFAR */
#else
#define CMLENS_HAS_FAULT_REGS 1
#endif

void cmlens_fault_report(uint32_t *frame, uint32_t exc_return) __attribute__((used, noreturn));

/* Entry stub: pick the stack the exception frame was pushed on (EXC_RETURN bit 2), pass it and
 * EXC_RETURN to the C reporter. Armv6-M compatible instructions only. */
#define CMLENS_FAULT_ENTRY(name)                                                    \
  __attribute__((naked, weak)) void name(void) {                                   \
    __asm volatile("mov r1, lr\n\t"                                                  \
                   "movs r2, #4\n\t"                                                 \
                   "tst r1, r2\n\t"                                                  \
                   "beq 1f\n\t"                                                      \
                   "mrs r0, psp\n\t"                                                 \
                   "b 2f\n"                                                          \
                   "1:\n\t"                                                          \
                   "mrs r0, msp\n"                                                   \
                   "2:\n\t"                                                          \
                   "ldr r2, =cmlens_fault_report\n\t"                                \
                   "bx r2\n\t"                                                       \
                   ".ltorg\n");                                                      \
  }

CMLENS_FAULT_ENTRY(HardFault_Handler)
CMLENS_FAULT_ENTRY(MemManage_Handler)
CMLENS_FAULT_ENTRY(BusFault_Handler)
CMLENS_FAULT_ENTRY(UsageFault_Handler)
CMLENS_FAULT_ENTRY(SecureFault_Handler)
CMLENS_FAULT_ENTRY(cmlens_default_handler)

void NMI_Handler(void) __attribute__((weak, alias("cmlens_default_handler")));
void SVC_Handler(void) __attribute__((weak, alias("cmlens_default_handler")));
void DebugMon_Handler(void) __attribute__((weak, alias("cmlens_default_handler")));
void PendSV_Handler(void) __attribute__((weak, alias("cmlens_default_handler")));
void SysTick_Handler(void) __attribute__((weak, alias("cmlens_default_handler")));

static void put_hex(const char *label, uint32_t v) {
  static const char digits[] = "0123456789abcdef";
  char buf[12];
  buf[0] = '0';
  buf[1] = 'x';
  for (int i = 0; i < 8; i++) buf[2 + i] = digits[(v >> (28 - 4 * i)) & 0xFu];
  buf[10] = 0;
  cmlens_uart_puts(" ");
  cmlens_uart_puts(label);
  cmlens_uart_puts("=");
  cmlens_uart_puts(buf);
}

static void put_dec(unsigned v) {
  char buf[12];
  int i = 11;
  buf[i] = 0;
  do {
    buf[--i] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v && i > 0);
  cmlens_uart_puts(&buf[i]);
}

static const char *exception_name(unsigned n) {
  switch (n) {
    case 2: return "NMI";
    case 3: return "HardFault";
    case 4: return "MemManage";
    case 5: return "BusFault";
    case 6: return "UsageFault";
    case 7: return "SecureFault";
    case 11: return "SVCall";
    case 12: return "DebugMonitor";
    case 14: return "PendSV";
    case 15: return "SysTick";
    default: return 0;
  }
}

void cmlens_fault_report(uint32_t *frame, uint32_t exc_return) {
  unsigned exc = SCB_ICSR & 0x1FFu; /* VECTACTIVE */
  uint32_t cfsr = 0, hfsr = 0, mmfar = 0, bfar = 0;
#if CMLENS_HAS_FAULT_REGS
  cfsr = SCB_CFSR;
  hfsr = SCB_HFSR;
  mmfar = SCB_MMFAR;
  bfar = SCB_BFAR;
#endif
  cmlens_uart_puts("\r\n" CMLENS_FAULT_PREFIX);
  const char *name = exception_name(exc);
  if (name) {
    cmlens_uart_puts(name);
  } else {
    cmlens_uart_puts(exc >= 16 ? "IRQ" : "Exception");
    put_dec(exc >= 16 ? exc - 16 : exc);
  }
  put_hex("cfsr", cfsr);
  put_hex("hfsr", hfsr);
  put_hex("mmfar", mmfar);
  put_hex("bfar", bfar);
  /* Stacked frame: r0 r1 r2 r3 r12 lr pc xpsr. */
  put_hex("pc", frame[6]);
  put_hex("lr", frame[5]);
  put_hex("xpsr", frame[7]);
  put_hex("sp", (uint32_t)(uintptr_t)frame);
  put_hex("exc_return", exc_return);
  cmlens_uart_puts("\r\n");
  unsigned status = CMLENS_EXIT_FAULT_BASE + exc;
  cmlens_exit((int)(status > 255u ? 255u : status));
}
