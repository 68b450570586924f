/* Small int8 kernels in the style of CMSIS-NN (per-tensor/per-channel requantization with
 * multiplier + shift), written for the self-test; not CMSIS-NN code. */
#ifndef CMLENS_INT8_KERNELS_H
#define CMLENS_INT8_KERNELS_H

#include <stdint.h>

/* round(val * multiplier / 2^31 * 2^shift) the CMSIS-NN way: doubling high multiply (rounding half
 * up), then a rounding arithmetic right shift (ties away from zero). */
int32_t st_requantize(int32_t val, int32_t multiplier, int32_t shift);
int8_t st_sat_add_s8(int8_t a, int8_t b);
int32_t st_dot_s8(const int8_t *a, const int8_t *b, int n);
/* out[o] = clamp(requant(bias[o] + sum((in[i] + in_off) * w[o][i])) + out_off) */
void st_fully_connected_s8(const int8_t *in, const int8_t *w, const int32_t *bias, int n_in, int n_out,
                           int32_t in_off, int32_t out_off, int32_t mult, int32_t shift, int8_t *out);
/* Valid 3x3 convolution, one input channel, NHWC output with per-channel requantization. */
void st_conv3x3_s8(const int8_t *in, int h, int w, const int8_t *k, const int32_t *bias, int n_out,
                   int32_t in_off, int32_t out_off, const int32_t *mult, const int32_t *shift, int8_t *out);

#endif
