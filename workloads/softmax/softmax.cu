// cockpit_softmax: y = softmax(x) along the last dimension, fp16 / bf16 / fp32 in and out,
// fp32 math.
//
// No torch/ATen/c10/pybind header here, on purpose: this file compiles in seconds with plain
//   nvcc -std=c++17 -O3 -Xptxas=-v -arch=sm_90 -c workloads/softmax/softmax.cu
// and must also build under torch's default nvcc flags (__CUDA_NO_HALF_OPERATORS__ and
// friends), so it uses only the conversion intrinsics, never half/bfloat16 operators.
//
// Two paths, picked per row length N by the launcher:
//   warp path   N <= SOFTMAX_WARP_MAX_N: one warp per row, SOFTMAX_ROWS_PER_BLOCK rows per
//               block; the warp holds its row in registers, so x is read once.
//   block path  longer rows: one block of SOFTMAX_LONG_THREADS threads per row. The row is held
//               in registers while each thread's share fits its register budget (kLongCacheRegs);
//               past that the block streams it and reads x again for the write pass (from L2
//               while the rows in flight fit there).
// Every thread keeps an online (max, sum of exp) pair over its elements: one vector at a time,
// the running sum is rescaled once per vector, not once per element. The pairs are merged with
// warp shuffles (and, on the block path, through shared memory), then the write pass computes
// exp(x - max) / sum.
//
// Memory access: each row is read in SOFTMAX_VEC-element vectors (16 bytes for 8 halves or 4
// floats), consecutive threads on consecutive vectors. A row need not start on a vector
// boundary (N = 1000 does, N = 31 does not): the elements before the first aligned one (the
// head, < VEC of them) and after the last whole vector (the tail, < VEC) are one scalar each for
// the first threads. The output is stored as vectors when it shares x's alignment modulo the
// vector size (fresh tensors always do), else element by element.

#include "softmax.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

// ---------------------------------------------------------------------------------------------
// Knobs (-DSOFTMAX_VEC=4 ...). workloads/softmax/softmax.py declares the same values and the
// rule that joins them; the static_asserts below are the kernel's own word.
//   SOFTMAX_ROWS_PER_BLOCK  warps per block on the warp path (one row each)
//   SOFTMAX_VEC             elements per vector load; capped at 16 bytes per dtype (8 halves,
//                           4 floats), so 8 means "16-byte loads" for every dtype
//   SOFTMAX_LONG_THREADS    threads per block (one row) on the block path
//   SOFTMAX_WARP_MAX_N      the longest row the warp path takes: a lane holds up to
//                           WARP_MAX_N / 32 elements in registers (in the input type)
// ---------------------------------------------------------------------------------------------
#ifndef SOFTMAX_ROWS_PER_BLOCK
#define SOFTMAX_ROWS_PER_BLOCK 4
#endif
#ifndef SOFTMAX_VEC
#define SOFTMAX_VEC 8
#endif
#ifndef SOFTMAX_LONG_THREADS
#define SOFTMAX_LONG_THREADS 512
#endif
#ifndef SOFTMAX_WARP_MAX_N
#define SOFTMAX_WARP_MAX_N 2048
#endif

namespace cockpit_softmax {
namespace {

constexpr int kRowsPerBlock = SOFTMAX_ROWS_PER_BLOCK;
constexpr int kVecKnob = SOFTMAX_VEC;
constexpr int kLongThreads = SOFTMAX_LONG_THREADS;
constexpr int kWarpMaxN = SOFTMAX_WARP_MAX_N;

constexpr bool is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

static_assert(kVecKnob == 1 || kVecKnob == 2 || kVecKnob == 4 || kVecKnob == 8,
              "SOFTMAX_VEC must be 1, 2, 4 or 8");
static_assert(kRowsPerBlock >= 1 && kRowsPerBlock * 32 <= 1024,
              "SOFTMAX_ROWS_PER_BLOCK: 1 to 32 warps per block");
static_assert(kLongThreads % 32 == 0 && kLongThreads >= 32 && kLongThreads <= 1024,
              "SOFTMAX_LONG_THREADS: a multiple of 32, at most 1024");
static_assert(is_pow2(kWarpMaxN) && kWarpMaxN >= 32 * 8 && kWarpMaxN <= 4096,
              "SOFTMAX_WARP_MAX_N: a power of two from 256 (one 8-wide vector per lane) to 4096 "
              "(128 elements per lane in registers)");

// Registers a block-path thread may spend on its cached share of the row: half of what
// __launch_bounds__(kLongThreads) leaves it (64K registers per block), at most 64.
constexpr int kLongCacheRegs = (65536 / kLongThreads / 2) < 64 ? (65536 / kLongThreads / 2) : 64;

constexpr float kLog2e = 1.4426950408889634f;

// ---------------------------------------------------------------------------------------------
// Element types.
// ---------------------------------------------------------------------------------------------
template <typename T>
struct Elem;

template <>
struct Elem<__half> {
  static constexpr const char* kCxx = "__half";  // as c++filt prints it
  static constexpr const char* kShort = "half";
  static __device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
  static __device__ __forceinline__ __half from_float(float v) { return __float2half_rn(v); }
};

template <>
struct Elem<__nv_bfloat16> {
  static constexpr const char* kCxx = "__nv_bfloat16";
  static constexpr const char* kShort = "bf16";
  static __device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __forceinline__ __nv_bfloat16 from_float(float v) {
    return __float2bfloat16_rn(v);
  }
};

template <>
struct Elem<float> {
  static constexpr const char* kCxx = "float";
  static constexpr const char* kShort = "fp32";
  static __device__ __forceinline__ float to_float(float v) { return v; }
  static __device__ __forceinline__ float from_float(float v) { return v; }
};

// The vector width for T: the knob, capped at 16 bytes.
template <typename T>
constexpr int vec_of() {
  return kVecKnob * static_cast<int>(sizeof(T)) > 16 ? 16 / static_cast<int>(sizeof(T)) : kVecKnob;
}

// VEC elements loaded and stored as one access (alignas makes it a 2/4/8/16-byte ld/st).
template <typename T, int VEC>
struct alignas(sizeof(T) * VEC) Pack {
  T e[VEC];
};

// ---------------------------------------------------------------------------------------------
// The row statistics: running max m and sum s of exp(x - m), merged in any order.
// ---------------------------------------------------------------------------------------------
struct RowStats {
  float m = -INFINITY;
  float s = 0.f;  // 0 exactly when no element was seen (the largest one alone contributes 1)
};

// s * exp(m_from - m_to); an empty partial (s = 0, m = -inf) stays 0 instead of NaN.
__device__ __forceinline__ float rescale(float s, float m_from, float m_to) {
  return s == 0.f ? 0.f : s * exp2f((m_from - m_to) * kLog2e);
}

template <int K>
__device__ __forceinline__ void absorb(RowStats& st, const float (&v)[K]) {
  float vmax = v[0];
#pragma unroll
  for (int i = 1; i < K; ++i) vmax = fmaxf(vmax, v[i]);
  const float m = fmaxf(st.m, vmax);
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < K; ++i) sum += exp2f((v[i] - m) * kLog2e);
  st.s = rescale(st.s, st.m, m) + sum;
  st.m = m;
}

__device__ __forceinline__ void merge(RowStats& st, float m, float s) {
  const float mx = fmaxf(st.m, m);
  st.s = rescale(st.s, st.m, mx) + rescale(s, m, mx);
  st.m = mx;
}

// After it every lane holds the warp's merged pair (xor butterfly: the same merges, in a
// commutative order, on every lane).
__device__ __forceinline__ void warp_merge(RowStats& st) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float m = __shfl_xor_sync(0xffffffffu, st.m, offset);
    const float s = __shfl_xor_sync(0xffffffffu, st.s, offset);
    merge(st, m, s);
  }
}

// The row's pair on every thread of the kThreads that share the row. A block-path block does
// one row and exits, so its shared scratch is written once: one barrier, no trailing one.
template <int kThreads>
__device__ __forceinline__ void row_merge(RowStats& st) {
  warp_merge(st);
  if constexpr (kThreads > 32) {
    constexpr int kWarps = kThreads / 32;
    __shared__ float part_m[kWarps];
    __shared__ float part_s[kWarps];
    const int lane = threadIdx.x % 32;
    if (lane == 0) {
      part_m[threadIdx.x / 32] = st.m;
      part_s[threadIdx.x / 32] = st.s;
    }
    __syncthreads();
    // Every warp merges all the partials itself rather than waiting for one to broadcast.
    st = RowStats{};
    if (lane < kWarps) {
      st.m = part_m[lane];
      st.s = part_s[lane];
    }
    warp_merge(st);
  }
}

// ---------------------------------------------------------------------------------------------
// One row.
// ---------------------------------------------------------------------------------------------
// Where a row's whole vectors are: `head` scalars up to the first VEC-aligned element, `nvec`
// vectors, then `tail` scalars from `tail_start`.
template <typename T, int VEC>
struct RowSplit {
  int head;
  int nvec;
  int tail_start;
  int tail;

  __device__ __forceinline__ RowSplit(const T* row, int n) {
    const int misaligned = static_cast<int>((reinterpret_cast<uintptr_t>(row) / sizeof(T)) % VEC);
    head = misaligned == 0 ? 0 : min(n, VEC - misaligned);
    nvec = (n - head) / VEC;
    tail_start = head + nvec * VEC;
    tail = n - tail_start;
  }
};

template <typename T, int VEC>
__device__ __forceinline__ void to_floats(const Pack<T, VEC>& p, float (&v)[VEC]) {
#pragma unroll
  for (int e = 0; e < VEC; ++e) v[e] = Elem<T>::to_float(p.e[e]);
}

// Hides p's value from the compiler, so the write pass converts the cached elements again
// instead of keeping fp32 copies of all of them live across the row reduction (at the largest
// caches those copies spill).
template <typename T, int VEC>
__device__ __forceinline__ void forget_value(Pack<T, VEC>& p) {
  if constexpr (sizeof(p) >= 4) {
    uint32_t* words = reinterpret_cast<uint32_t*>(&p);
#pragma unroll
    for (int i = 0; i < static_cast<int>(sizeof(p) / 4); ++i) asm volatile("" : "+r"(words[i]));
  } else {
    asm volatile("" : "+h"(*reinterpret_cast<unsigned short*>(&p)));
  }
}

// Writes vector i of `y` (which starts on a vector boundary when `vec_store`).
template <typename T, int VEC>
__device__ __forceinline__ void store(T* y, int i, const Pack<T, VEC>& in, float m, float inv,
                                      bool vec_store) {
  Pack<T, VEC> out;
#pragma unroll
  for (int e = 0; e < VEC; ++e) {
    out.e[e] = Elem<T>::from_float(exp2f((Elem<T>::to_float(in.e[e]) - m) * kLog2e) * inv);
  }
  if (vec_store) {
    reinterpret_cast<Pack<T, VEC>*>(y)[i] = out;
  } else {
#pragma unroll
    for (int e = 0; e < VEC; ++e) y[i * VEC + e] = out.e[e];
  }
}

// softmax of one row of n elements, shared by kThreads threads (t is this one). kChunks > 0:
// thread t caches vectors t, t + kThreads, ... (kChunks of them) in registers; kChunks == 0:
// it streams them, and reads them again for the write pass.
template <typename T, int VEC, int kThreads, int kChunks>
__device__ __forceinline__ void softmax_row(const T* __restrict__ x, T* __restrict__ y, int n,
                                            int t, bool vec_store) {
  using V = Pack<T, VEC>;
  const RowSplit<T, VEC> split(x, n);
  const V* xv = reinterpret_cast<const V*>(x + split.head);
  T* yv = y + split.head;

  RowStats st;
  float head[1] = {0.f};
  float tail[1] = {0.f};
  if (t < split.head) {
    head[0] = Elem<T>::to_float(x[t]);
    absorb(st, head);
  }
  if (t < split.tail) {
    tail[0] = Elem<T>::to_float(x[split.tail_start + t]);
    absorb(st, tail);
  }

  V cache[kChunks > 0 ? kChunks : 1];
  if constexpr (kChunks > 0) {
    // All loads first, so every one of them is in flight at once.
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int i = c * kThreads + t;
      if (i < split.nvec) cache[c] = xv[i];
    }
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      if (c * kThreads + t < split.nvec) {
        float v[VEC];
        to_floats(cache[c], v);
        absorb(st, v);
      }
    }
  } else {
#pragma unroll 4
    for (int i = t; i < split.nvec; i += kThreads) {
      const V in = xv[i];  // one vector load (a reference into x would be read element-wise)
      float v[VEC];
      to_floats(in, v);
      absorb(st, v);
    }
  }

  row_merge<kThreads>(st);
  const float inv = 1.f / st.s;

  if (t < split.head) y[t] = Elem<T>::from_float(exp2f((head[0] - st.m) * kLog2e) * inv);
  if (t < split.tail) {
    y[split.tail_start + t] = Elem<T>::from_float(exp2f((tail[0] - st.m) * kLog2e) * inv);
  }
  if constexpr (kChunks > 0) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int i = c * kThreads + t;
      forget_value(cache[c]);
      if (i < split.nvec) store(yv, i, cache[c], st.m, inv, vec_store);
    }
  } else {
#pragma unroll 4
    for (int i = t; i < split.nvec; i += kThreads) {
      const V in = xv[i];
      store(yv, i, in, st.m, inv, vec_store);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The kernels.
// ---------------------------------------------------------------------------------------------
// One warp per row, kRows rows per block. A warp past the last row leaves at once (the warp
// path has no block barrier).
template <typename T, int VEC, int kRows, int kChunks>
__global__ void __launch_bounds__(kRows * 32)
    softmax_warp_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int n,
                        bool vec_store) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRows + threadIdx.x / 32;
  if (row >= rows) return;
  softmax_row<T, VEC, 32, kChunks>(x + row * n, y + row * n, n, threadIdx.x % 32, vec_store);
}

// One block of kThreads per row.
template <typename T, int VEC, int kThreads, int kChunks>
__global__ void __launch_bounds__(kThreads)
    softmax_block_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int n,
                         bool vec_store) {
  const int64_t row = blockIdx.x;
  softmax_row<T, VEC, kThreads, kChunks>(x + row * n, y + row * n, n, threadIdx.x, vec_store);
}

// ---------------------------------------------------------------------------------------------
// Host side.
// ---------------------------------------------------------------------------------------------
template <typename T>
constexpr int regs_per_vec() {
  return vec_of<T>() * static_cast<int>(sizeof(T)) <= 4 ? 1 : vec_of<T>() * static_cast<int>(sizeof(T)) / 4;
}

// The largest register cache of each path, in vectors per thread (powers of two: the launcher
// picks the smallest power of two that holds the row).
template <typename T>
constexpr int warp_max_chunks() {
  return kWarpMaxN / (32 * vec_of<T>());
}
template <typename T>
constexpr int long_max_chunks() {
  return kLongCacheRegs / regs_per_vec<T>();
}

// A kernel instantiation and its launch shape. kChunks == 0: the streamed block path.
template <typename T, int kChunks>
struct WarpPath {
  static constexpr int kVec = vec_of<T>();
  static constexpr int kThreads = kRowsPerBlock * 32;
  static constexpr auto kernel = softmax_warp_kernel<T, kVec, kRowsPerBlock, kChunks>;
  static constexpr const char* kKernel = "softmax_warp_kernel";
  static int64_t blocks(int64_t rows) { return (rows + kRowsPerBlock - 1) / kRowsPerBlock; }
  static void label(char* out, size_t size) {
    std::snprintf(out, size, "softmax_warp<%s, vec=%d, %d rows/block, %d vec/lane>",
                  Elem<T>::kShort, kVec, kRowsPerBlock, kChunks);
  }
  static void template_args(char* out, size_t size) {
    std::snprintf(out, size, "%s, %d, %d, %d", Elem<T>::kCxx, kVec, kRowsPerBlock, kChunks);
  }
};

template <typename T, int kChunks>
struct BlockPath {
  static constexpr int kVec = vec_of<T>();
  static constexpr int kThreads = kLongThreads;
  static constexpr auto kernel = softmax_block_kernel<T, kVec, kLongThreads, kChunks>;
  static constexpr const char* kKernel = "softmax_block_kernel";
  static int64_t blocks(int64_t rows) { return rows; }
  static void label(char* out, size_t size) {
    if (kChunks > 0) {
      std::snprintf(out, size, "softmax_block<%s, vec=%d, %d threads, %d vec/thread>",
                    Elem<T>::kShort, kVec, kLongThreads, kChunks);
    } else {
      std::snprintf(out, size, "softmax_block<%s, vec=%d, %d threads, streamed>", Elem<T>::kShort,
                    kVec, kLongThreads);
    }
  }
  static void template_args(char* out, size_t size) {
    std::snprintf(out, size, "%s, %d, %d, %d", Elem<T>::kCxx, kVec, kLongThreads, kChunks);
  }
};

template <typename T, typename P>
cudaError_t launch(const SoftmaxParams& p, cudaStream_t stream) {
  const int64_t blocks = P::blocks(p.rows);
  if (blocks > INT32_MAX) return cudaErrorInvalidValue;  // grid.x
  const T* x = static_cast<const T*>(p.x);
  T* y = static_cast<T*>(p.y);
  // Rows of x and y start at the same offset from a vector boundary iff the bases do.
  constexpr uintptr_t kVecBytes = sizeof(T) * P::kVec;
  const bool vec_store =
      (reinterpret_cast<uintptr_t>(p.x) - reinterpret_cast<uintptr_t>(p.y)) % kVecBytes == 0;
  P::kernel<<<static_cast<unsigned>(blocks), P::kThreads, 0, stream>>>(
      x, y, p.rows, static_cast<int>(p.cols), vec_store);
  return cudaGetLastError();
}

// The smallest cache of at least `chunks` vectors per thread, kChunks doubling up to kMax.
template <typename T, template <typename, int> class Path, int kChunks, int kMax>
cudaError_t launch_cached(int chunks, const SoftmaxParams& p, cudaStream_t stream) {
  if constexpr (kChunks < kMax) {
    if (chunks > kChunks) return launch_cached<T, Path, kChunks * 2, kMax>(chunks, p, stream);
  }
  return launch<T, Path<T, kChunks>>(p, stream);
}

int ceil_div(int64_t a, int64_t b) { return static_cast<int>((a + b - 1) / b); }

template <typename T>
cudaError_t dispatch(const SoftmaxParams& p, cudaStream_t stream) {
  if (reinterpret_cast<uintptr_t>(p.x) % sizeof(T) != 0 ||
      reinterpret_cast<uintptr_t>(p.y) % sizeof(T) != 0) {
    return cudaErrorInvalidValue;  // the row split counts whole elements to a vector boundary
  }
  // A row holds at most cols / VEC whole vectors, wherever it starts.
  const int64_t vectors = p.cols / vec_of<T>();
  if (p.cols <= kWarpMaxN) {
    return launch_cached<T, WarpPath, 1, warp_max_chunks<T>()>(ceil_div(vectors, 32), p, stream);
  }
  const int chunks = ceil_div(vectors, kLongThreads);
  if (chunks <= long_max_chunks<T>()) {
    return launch_cached<T, BlockPath, 1, long_max_chunks<T>()>(chunks, p, stream);
  }
  return launch<T, BlockPath<T, 0>>(p, stream);
}

// ---------------------------------------------------------------------------------------------
// The launch table: built from the same WarpPath / BlockPath instantiations the launcher uses.
// ---------------------------------------------------------------------------------------------
template <typename P>
KernelLaunch describe() {
  KernelLaunch k{};
  std::snprintf(k.kernel, sizeof k.kernel, "%s", P::kKernel);
  P::template_args(k.template_args, sizeof k.template_args);
  P::label(k.label, sizeof k.label);
  k.threads_per_block = P::kThreads;
  k.function = reinterpret_cast<const void*>(P::kernel);
  return k;
}

// Appends every cache size from kChunks up to kMax.
template <typename T, template <typename, int> class Path, int kChunks, int kMax>
void describe_cached(KernelLaunch* out, int capacity, int& n) {
  if (n < capacity) out[n] = describe<Path<T, kChunks>>();
  ++n;
  if constexpr (kChunks < kMax) describe_cached<T, Path, kChunks * 2, kMax>(out, capacity, n);
}

template <typename T>
void describe_dtype(KernelLaunch* out, int capacity, int& n) {
  describe_cached<T, WarpPath, 1, warp_max_chunks<T>()>(out, capacity, n);
  describe_cached<T, BlockPath, 1, long_max_chunks<T>()>(out, capacity, n);
  if (n < capacity) out[n] = describe<BlockPath<T, 0>>();
  ++n;
}

}  // namespace

int softmax_kernels(KernelLaunch* out, int capacity) {
  int n = 0;
  describe_dtype<__half>(out, capacity, n);
  describe_dtype<__nv_bfloat16>(out, capacity, n);
  describe_dtype<float>(out, capacity, n);
  return n;
}

cudaError_t kernel_occupancy(const KernelLaunch& kernel, KernelOccupancy* out) {
  cudaFuncAttributes attr{};
  int blocks = 0;
  cudaError_t err = cudaFuncGetAttributes(&attr, kernel.function);
  if (err == cudaSuccess) {
    err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, kernel.function, kernel.threads_per_block, kernel.dynamic_smem_bytes);
  }
  if (err != cudaSuccess) {
    cudaGetLastError();  // a later launch must not report this query's error as its own
    return err;
  }
  out->blocks_per_sm = blocks;
  out->num_regs = attr.numRegs;
  out->local_bytes = static_cast<int>(attr.localSizeBytes);
  out->static_smem_bytes = static_cast<int>(attr.sharedSizeBytes);
  out->max_dynamic_smem_bytes = attr.maxDynamicSharedSizeBytes;
  out->binary_version = attr.binaryVersion;
  out->ptx_version = attr.ptxVersion;
  return cudaSuccess;
}

cudaError_t softmax_forward(const SoftmaxParams& p, cudaStream_t stream) {
  if (p.rows < 0 || p.cols < 0 || p.cols > INT32_MAX) return cudaErrorInvalidValue;
  if (p.rows == 0 || p.cols == 0) return cudaSuccess;  // nothing to do
  if (!p.x || !p.y) return cudaErrorInvalidValue;
  switch (p.dtype) {
    case DType::kFloat16:
      return dispatch<__half>(p, stream);
    case DType::kBFloat16:
      return dispatch<__nv_bfloat16>(p, stream);
    case DType::kFloat32:
      return dispatch<float>(p, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace cockpit_softmax
