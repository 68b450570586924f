/*
 * CortexM Lens's own copy operators for patch schedules (issue 47), registered as cmlens::window.out and
 * cmlens::tiles.out (cmlens_ops.yaml). Why our own: a patch window cut from a channels-last tensor with
 * ExecuTorch's portable slice_copy needs a dim-order copy to contiguous and back per slice (portable
 * slice/cat index by logical strides and require one dim order), and border padding needs a cortex_m.pad
 * after it: three copies of every halo window, +8.8 % instructions on mv2. Here one copy per window and
 * one per patch output, a memcpy per channels-last pixel row (rows are contiguous in NHWC).
 *
 * window(input[N,C,H,W], box=[h0,h1,w0,w1], pad_value) -> out[N,C,h1-h0,w1-w0]: input pixels inside the
 *   box, pad_value (int8: the next conv's input zero point) where the box leaves the input (true borders).
 * tiles(patches[R*cols], cols) -> out: the patches, row-major, written into their places in the whole.
 * Both read and write any dim order through the tensors' strides; the fast path is channels-last.
 */
#include <cstring>

#include <executorch/runtime/core/event_tracer_hooks.h>
#include <executorch/runtime/kernel/kernel_includes.h>
#include <executorch/runtime/kernel/operator_registry.h>

namespace cmlens {
namespace {

using executorch::aten::ArrayRef;
using executorch::aten::ScalarType;
using executorch::aten::Tensor;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::Kernel;
using executorch::runtime::KernelRuntimeContext;
using executorch::runtime::Span;

struct Geo {                     // a 4-D tensor's sizes and element strides (logical N, C, H, W)
  int32_t size[4];
  int32_t stride[4];
};

bool geo_of(const Tensor& t, Geo& g) {
  if (t.dim() != 4) {
    return false;
  }
  for (int i = 0; i < 4; ++i) {
    g.size[i] = static_cast<int32_t>(t.size(i));
    g.stride[i] = static_cast<int32_t>(t.strides()[i]);
  }
  return true;
}

bool channels_last(const Geo& g) {   // C innermost, then W: a pixel row is contiguous (H any stride)
  return g.stride[1] == 1 && g.stride[3] == g.size[1];
}

// One output pixel's C elements: from `from` (source stride sc) or `pad`; 32-bit index arithmetic only
// (int64 multiplies cost several instructions each on a 32-bit core: 45 instructions per byte, measured).
inline void copy_pixel(const uint8_t* from, int32_t sc, uint8_t* to, int32_t dc, int32_t C, size_t es, uint8_t pad) {
  if (es == 1) {
    if (from == nullptr) {
      for (int32_t c = 0; c < C; ++c, to += dc) {
        *to = pad;
      }
    } else {
      for (int32_t c = 0; c < C; ++c, to += dc, from += sc) {
        *to = *from;
      }
    }
    return;
  }
  for (int32_t c = 0; c < C; ++c) {
    if (from == nullptr) {
      memset(to + static_cast<size_t>(c) * dc * es, pad, es);
    } else {
      memcpy(to + static_cast<size_t>(c) * dc * es, from + static_cast<size_t>(c) * sc * es, es);
    }
  }
}

// dst[n, c, y, x] = src[n, c, y + oy, x + ox] inside src, else `pad` (element size `es` bytes).
void copy_box(const uint8_t* src, const Geo& s, uint8_t* dst, const Geo& d, int32_t oy, int32_t ox,
              size_t es, int8_t pad_value) {
  const int32_t N = d.size[0], C = d.size[1], Hd = d.size[2], Wd = d.size[3];
  const uint8_t pad = static_cast<uint8_t>(pad_value);
  const int32_t x0 = ox < 0 ? (-ox < Wd ? -ox : Wd) : 0;          // first x inside the source
  int32_t x1 = s.size[3] - ox;                                      // one past the last
  x1 = x1 > Wd ? Wd : (x1 < x0 ? x0 : x1);
  const bool rows = channels_last(s) && channels_last(d);           // a pixel row is one memcpy
  const size_t px = static_cast<size_t>(C) * es;
  for (int32_t n = 0; n < N; ++n) {
    for (int32_t y = 0; y < Hd; ++y) {
      uint8_t* row = dst + static_cast<size_t>(n * d.stride[0] + y * d.stride[2]) * es;
      const int32_t sy = y + oy;
      const bool in_rows = sy >= 0 && sy < s.size[2];
      const uint8_t* srow = in_rows ? src + static_cast<size_t>(n * s.stride[0] + sy * s.stride[2]) * es : nullptr;
      if (rows) {
        if (!in_rows) {
          memset(row, pad, static_cast<size_t>(Wd) * px);
          continue;
        }
        memset(row, pad, static_cast<size_t>(x0) * px);
        memcpy(row + x0 * px, srow + static_cast<size_t>((x0 + ox) * s.stride[3]) * es,
               static_cast<size_t>(x1 - x0) * px);
        memset(row + x1 * px, pad, static_cast<size_t>(Wd - x1) * px);
        continue;
      }
      for (int32_t x = 0; x < Wd; ++x) {
        const bool in = in_rows && x >= x0 && x < x1;
        copy_pixel(in ? srow + static_cast<size_t>((x + ox) * s.stride[3]) * es : nullptr, s.stride[1],
                   row + static_cast<size_t>(x * d.stride[3]) * es, d.stride[1], C, es, pad);
      }
    }
  }
}

Tensor& window_out(KernelRuntimeContext& ctx, const Tensor& input, ArrayRef<int64_t> box, int64_t pad_value,
                   Tensor& out) {
  Geo s, d;
  if (!geo_of(input, s) || !geo_of(out, d) || box.size() != 4 || input.scalar_type() != ScalarType::Char ||
      out.scalar_type() != ScalarType::Char || d.size[0] != s.size[0] || d.size[1] != s.size[1] ||
      d.size[2] != box[1] - box[0] || d.size[3] != box[3] - box[2]) {
    ET_LOG(Error, "cmlens::window: int8 4-D input and out [N, C, h1-h0, w1-w0] expected");
    ctx.fail(Error::InvalidArgument);
    return out;
  }
  copy_box(static_cast<const uint8_t*>(input.const_data_ptr()), s, static_cast<uint8_t*>(out.mutable_data_ptr()),
           d, static_cast<int32_t>(box[0]), static_cast<int32_t>(box[2]), 1, static_cast<int8_t>(pad_value));
  return out;
}

Tensor& tiles_out(KernelRuntimeContext& ctx, ArrayRef<Tensor> patches, int64_t cols, Tensor& out) {
  Geo d;
  if (!geo_of(out, d) || cols < 1 || patches.size() % static_cast<size_t>(cols) != 0) {
    ET_LOG(Error, "cmlens::tiles: a 4-D out and rows x %d patches expected", static_cast<int>(cols));
    ctx.fail(Error::InvalidArgument);
    return out;
  }
  const size_t es = out.element_size();
  uint8_t* base = static_cast<uint8_t*>(out.mutable_data_ptr());
  int32_t y0 = 0;
  for (size_t r = 0; r < patches.size() / static_cast<size_t>(cols); ++r) {
    int32_t x0 = 0, rows = 0;
    for (size_t c = 0; c < static_cast<size_t>(cols); ++c) {
      const Tensor& p = patches[r * static_cast<size_t>(cols) + c];
      Geo s;
      if (!geo_of(p, s) || p.scalar_type() != out.scalar_type() || s.size[1] != d.size[1] ||
          y0 + s.size[2] > d.size[2] || x0 + s.size[3] > d.size[3]) {
        ET_LOG(Error, "cmlens::tiles: patch %d does not fit the output", static_cast<int>(r * cols + c));
        ctx.fail(Error::InvalidArgument);
        return out;
      }
      Geo at = d;                  // the patch's place in the output: same strides, the patch's sizes
      at.size[2] = s.size[2];
      at.size[3] = s.size[3];
      copy_box(static_cast<const uint8_t*>(p.const_data_ptr()), s,
               base + static_cast<size_t>(y0 * d.stride[2] + x0 * d.stride[3]) * es, at, 0, 0, es, 0);
      x0 += s.size[3];
      rows = s.size[2];
    }
    y0 += rows;
  }
  return out;
}

// The "native_call_<op>" event ExecuTorch's generated registrations record: profiles name these ops by it.
void window_boxed(KernelRuntimeContext& ctx, Span<EValue*> stack) {
  executorch::runtime::internal::EventTracerProfileOpScope scope(ctx.internal_event_tracer(), "native_call_window.out");
  window_out(ctx, stack[0]->toTensor(), stack[1]->toIntList(), stack[2]->toInt(), stack[3]->toTensor());
}

void tiles_boxed(KernelRuntimeContext& ctx, Span<EValue*> stack) {
  executorch::runtime::internal::EventTracerProfileOpScope scope(ctx.internal_event_tracer(), "native_call_tiles.out");
  tiles_out(ctx, stack[0]->toTensorList(), stack[1]->toInt(), stack[2]->toTensor());
}

const Kernel kKernels[] = {Kernel("cmlens::window.out", window_boxed), Kernel("cmlens::tiles.out", tiles_boxed)};
const Error kRegistered = executorch::runtime::register_kernels(Span<const Kernel>(kKernels, 2));

}  // namespace
}  // namespace cmlens
