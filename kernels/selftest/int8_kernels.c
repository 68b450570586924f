#include "int8_kernels.h"

static int32_t doubling_high_mult(int32_t a, int32_t b) {
  int64_t prod = (int64_t)a * (int64_t)b + ((int64_t)1 << 30);
  return (int32_t)(prod >> 31);
}

static int32_t rounding_shift_right(int32_t x, int32_t exponent) {
  if (exponent == 0) return x;
  int32_t mask = (int32_t)((1u << exponent) - 1u);
  int32_t remainder = x & mask;
  int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

int32_t st_requantize(int32_t val, int32_t multiplier, int32_t shift) {
  int32_t left = shift > 0 ? shift : 0;
  int32_t right = shift > 0 ? 0 : -shift;
  return rounding_shift_right(doubling_high_mult((int32_t)((uint32_t)val << left), multiplier), right);
}

static int8_t clamp_s8(int32_t v) { return (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v); }

int8_t st_sat_add_s8(int8_t a, int8_t b) { return clamp_s8((int32_t)a + (int32_t)b); }

int32_t st_dot_s8(const int8_t *a, const int8_t *b, int n) {
  int32_t acc = 0;
  for (int i = 0; i < n; i++) acc += (int32_t)a[i] * (int32_t)b[i];
  return acc;
}

void st_fully_connected_s8(const int8_t *in, const int8_t *w, const int32_t *bias, int n_in, int n_out,
                           int32_t in_off, int32_t out_off, int32_t mult, int32_t shift, int8_t *out) {
  for (int o = 0; o < n_out; o++) {
    int32_t acc = bias[o];
    for (int i = 0; i < n_in; i++) acc += ((int32_t)in[i] + in_off) * (int32_t)w[o * n_in + i];
    out[o] = clamp_s8(st_requantize(acc, mult, shift) + out_off);
  }
}

void st_conv3x3_s8(const int8_t *in, int h, int w, const int8_t *k, const int32_t *bias, int n_out,
                   int32_t in_off, int32_t out_off, const int32_t *mult, const int32_t *shift, int8_t *out) {
  int oh = h - 2, ow = w - 2;
  for (int y = 0; y < oh; y++) {
    for (int x = 0; x < ow; x++) {
      for (int c = 0; c < n_out; c++) {
        int32_t acc = bias[c];
        for (int ky = 0; ky < 3; ky++) {
          for (int kx = 0; kx < 3; kx++) {
            acc += ((int32_t)in[(y + ky) * w + x + kx] + in_off) * (int32_t)k[c * 9 + ky * 3 + kx];
          }
        }
        out[(y * ow + x) * n_out + c] = clamp_s8(st_requantize(acc, mult[c], shift[c]) + out_off);
      }
    }
  }
}
