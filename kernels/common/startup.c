/* Vector table and Reset_Handler for Armv6-M/v7-M/v8-M/v8.1-M cores, in C (no assembly file).
 *
 * Reset_Handler: enable the FPU (and MVE: the same CP10/CP11 bits) via CPACR, set the stack limit on
 * Armv8-M mainline, copy/zero the sections listed in the linker script's __copy_table/__zero_table
 * (the CMSIS convention, so ExecuTorch's Corstone-300.ld works too), start the SysTick tick counter, run
 * static constructors, then main() and exit(). */
#include <stdint.h>
#include <stdlib.h>

#include "cmlens/board.h"
#include "cmlens/semihost.h"

#define CMLENS_NUM_IRQS 64

extern uint32_t __StackTop;
extern uint32_t __StackLimit;
extern uint32_t __copy_table_start__;
extern uint32_t __copy_table_end__;
extern uint32_t __zero_table_start__;
extern uint32_t __zero_table_end__;

extern int main(int argc, char **argv);
extern void __libc_init_array(void);

void Reset_Handler(void) __attribute__((noreturn));
/* Exception handlers: defined in fault.c (weak, so a firmware may override them). */
void NMI_Handler(void);
void HardFault_Handler(void);
void MemManage_Handler(void);
void BusFault_Handler(void);
void UsageFault_Handler(void);
void SecureFault_Handler(void);
void SVC_Handler(void);
void DebugMon_Handler(void);
void PendSV_Handler(void);
void SysTick_Handler(void);
void cmlens_default_handler(void);

typedef void (*cmlens_vector_t)(void);

__attribute__((used, section(".vectors"))) const cmlens_vector_t cmlens_vectors[16 + CMLENS_NUM_IRQS] = {
    [0] = (cmlens_vector_t)&__StackTop,
    [1] = Reset_Handler,
    [2] = NMI_Handler,
    [3] = HardFault_Handler,
    [4] = MemManage_Handler,
    [5] = BusFault_Handler,
    [6] = UsageFault_Handler,
    [7] = SecureFault_Handler,
    [11] = SVC_Handler,
    [12] = DebugMon_Handler,
    [14] = PendSV_Handler,
    [15] = SysTick_Handler,
    [16 ... 16 + CMLENS_NUM_IRQS - 1] = cmlens_default_handler,
};

#define CMLENS_REG(addr) (*(volatile uint32_t *)(addr))
#define SCB_VTOR CMLENS_REG(0xE000ED08u)
#define SCB_SHCSR CMLENS_REG(0xE000ED24u)
#define SCB_CPACR CMLENS_REG(0xE000ED88u)

static inline void cmlens_barrier(void) {
  __asm volatile("dsb 0xF\n\tisb 0xF" ::: "memory");
}

/* Newlib's __libc_init_array calls _init(); crti.o is not linked (-nostartfiles). */
void _init(void) {}
void _fini(void) {}
/* crtbegin.o (not linked either) defines __dso_handle; the full (non-nano) libstdc++ registers its static
 * destructors against it (eh_globals.o, pulled in by ExecuTorch's runner). One image, one handle. */
void *__dso_handle = &__dso_handle;

/* Copy and zero loops run before .data exists: keep them plain word loops that cannot be turned into
 * library calls or vector code (MVE is only usable after CPACR is written). */
__attribute__((optimize("no-tree-loop-distribute-patterns", "no-tree-vectorize")))
static void cmlens_init_memory(void) {
  for (uint32_t *t = &__copy_table_start__; t < &__copy_table_end__; t += 3) {
    const volatile uint32_t *src = (const uint32_t *)t[0];
    volatile uint32_t *dst = (uint32_t *)t[1];
    for (uint32_t i = 0; i < t[2]; i++) dst[i] = src[i];
  }
  for (uint32_t *t = &__zero_table_start__; t < &__zero_table_end__; t += 2) {
    volatile uint32_t *dst = (uint32_t *)t[0];
    for (uint32_t i = 0; i < t[1]; i++) dst[i] = 0u;
  }
}

void Reset_Handler(void) {
  cmlens_paint_stack(); /* first: the stack high-water mark at exit counts from here (memmark.c) */
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
  SCB_CPACR |= (0xFu << 20); /* CP10 + CP11 full access: FPU and (Armv8.1-M) MVE */
  cmlens_barrier();
#endif
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
  __asm volatile("msr msplim, %0" ::"r"(&__StackLimit)); /* stack overflow -> UsageFault STKOF */
#endif
  SCB_VTOR = (uint32_t)(uintptr_t)cmlens_vectors;
#if !defined(__ARM_ARCH_6M__) && !defined(__ARM_ARCH_8M_BASE__)
  SCB_SHCSR |= (1u << 16) | (1u << 17) | (1u << 18); /* MemManage, BusFault, UsageFault enabled */
#endif
  cmlens_barrier();
  cmlens_init_memory();
  cmlens_uart_init();
  cmlens_ticks_init(); /* SysTick: instruction counter under QEMU -icount (common/ticks.c) */
  __libc_init_array();

  char *argv[16] = {0};
  int argc = 0;
#if defined(CMLENS_SEMIHOSTING_ARGS)
  argc = cmlens_sh_args(argv, 15);
#endif
  if (argc == 0) {
    static char prog[] = "firmware";
    argv[0] = prog;
    argc = 1;
  }
  exit(main(argc, argv));
}
