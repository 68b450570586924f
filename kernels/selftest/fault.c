/* Faults on purpose so tests can check the fault report (see include/cmlens/fault.h).
 * Default: a load from an address no device decodes (precise BusFault, BFAR = that address).
 * CMLENS_FAULT_UDF: an undefined instruction (UsageFault UNDEFINSTR). */
#include <stdint.h>
#include <stdio.h>

#include "cmlens/board.h"

#ifndef CMLENS_FAULT_ADDRESS
#define CMLENS_FAULT_ADDRESS 0xF0000000u /* vendor system region: nothing is mapped there */
#endif

int main(void) {
#if defined(CMLENS_FAULT_UDF)
  printf("cmlens fault: board=%s executing an undefined instruction\n", cmlens_board.name);
  fflush(stdout);
  __asm volatile("udf #0");
#else
  printf("cmlens fault: board=%s reading 0x%08lx\n", cmlens_board.name, (unsigned long)CMLENS_FAULT_ADDRESS);
  fflush(stdout);
  volatile uint32_t value = *(volatile uint32_t *)CMLENS_FAULT_ADDRESS;
  printf("no fault: read 0x%08lx\n", (unsigned long)value);
#endif
  return 0;
}
