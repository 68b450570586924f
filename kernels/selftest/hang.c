/* Never finishes: lets tests check that a simulator time limit stops a hung firmware. */
#include <stdio.h>

#include "cmlens/board.h"

int main(void) {
  printf("cmlens hang: board=%s entering an endless loop\n", cmlens_board.name);
  fflush(stdout);
  for (;;) {
  }
}
