/* Stack and heap probe for the board layer's high-water marks (common/memmark.c): a call that puts a
 * frame of CMLENS_PROBE_STACK bytes on the stack, then one malloc of CMLENS_PROBE_HEAP bytes. The host
 * checks the `CMLENS MEMORY:` line printed at exit against these numbers (tests/firmware/
 * test_board_layer_qemu.py). Exit status 0, or 3 when the malloc was refused. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef CMLENS_PROBE_STACK
#define CMLENS_PROBE_STACK 6000
#endif
#ifndef CMLENS_PROBE_HEAP
#define CMLENS_PROBE_HEAP 20000
#endif

__attribute__((noinline)) static uint32_t deep_frame(uint32_t seed) {
  volatile uint8_t frame[CMLENS_PROBE_STACK];
  for (uint32_t i = 0; i < CMLENS_PROBE_STACK; i++) frame[i] = (uint8_t)(seed + i);
  uint32_t sum = 0;
  for (uint32_t i = 0; i < CMLENS_PROBE_STACK; i += 64) sum += frame[i];
  return sum;
}

int main(void) {
  printf("memprobe: frame %d B, malloc %d B\n", CMLENS_PROBE_STACK, CMLENS_PROBE_HEAP);
  printf("memprobe: sum %lu\n", (unsigned long)deep_frame(7u));
  volatile uint8_t *p = malloc(CMLENS_PROBE_HEAP);
  if (p == NULL) {
    printf("memprobe: malloc refused\n");
    return 3;
  }
  for (uint32_t i = 0; i < CMLENS_PROBE_HEAP; i += 256) p[i] = (uint8_t)i;
  printf("memprobe: malloc ok\n");
  free((void *)p);
  return 0;
}
