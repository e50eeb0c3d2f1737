// The row softmax as an engineer first writes it: the starting point of the learning-loop example
// session (bench/device/loop_session.sh, examples/sessions/20261129-*). It keeps the workload's
// interface (softmax.h: softmax_forward, the launch table, the occupancy query), so
// workloads/softmax/binding.cpp and softmax.py drive it unchanged.
//
// One warp per row, SOFTMAX_ROWS_PER_BLOCK rows per block, three passes over the row in global
// memory (max, sum of exp, write), fp32 math. Each lane takes its own contiguous slice of the row:
// lane l reads elements [l * per_lane, (l + 1) * per_lane). That is the defect the session's
// profile is asked about: at each load the 32 lanes of a warp touch 32 different sectors.
// The other knobs softmax.py declares (VEC, LONG_THREADS, WARP_MAX_N) do nothing here.

#include "softmax.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

#ifndef SOFTMAX_ROWS_PER_BLOCK
#define SOFTMAX_ROWS_PER_BLOCK 4
#endif

namespace cockpit_softmax {
namespace {

constexpr int kRowsPerBlock = SOFTMAX_ROWS_PER_BLOCK;
static_assert(kRowsPerBlock >= 1 && kRowsPerBlock * 32 <= 1024,
              "SOFTMAX_ROWS_PER_BLOCK: 1 to 32 warps per block");

__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(float v) { return v; }

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ float from_float<float>(float v) { return v; }

__device__ __forceinline__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

template <typename T>
__global__ void __launch_bounds__(32 * kRowsPerBlock)
    softmax_warp_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows, int cols) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = threadIdx.x % 32;
  const T* xr = x + row * cols;
  T* yr = y + row * cols;
  // This lane's slice of the row.
  const int per_lane = (cols + 31) / 32;
  const int begin = min(lane * per_lane, cols);
  const int end = min(begin + per_lane, cols);

  float m = -INFINITY;
  for (int i = begin; i < end; ++i) m = fmaxf(m, to_float(xr[i]));
  m = warp_max(m);
  float s = 0.f;
  for (int i = begin; i < end; ++i) s += expf(to_float(xr[i]) - m);
  const float inv = 1.f / warp_sum(s);
  for (int i = begin; i < end; ++i) yr[i] = from_float<T>(expf(to_float(xr[i]) - m) * inv);
}

int64_t blocks_for(int64_t rows) { return (rows + kRowsPerBlock - 1) / kRowsPerBlock; }

template <typename T>
cudaError_t launch(const SoftmaxParams& p, cudaStream_t stream) {
  const int64_t blocks = blocks_for(p.rows);
  if (blocks > INT32_MAX) return cudaErrorInvalidValue;
  softmax_warp_kernel<T><<<static_cast<unsigned>(blocks), 32 * kRowsPerBlock, 0, stream>>>(
      static_cast<const T*>(p.x), static_cast<T*>(p.y), p.rows, static_cast<int>(p.cols));
  return cudaGetLastError();
}

template <typename T>
KernelLaunch describe(const char* cxx, const char* name) {
  KernelLaunch k{};
  std::snprintf(k.kernel, sizeof k.kernel, "softmax_warp_kernel");
  std::snprintf(k.template_args, sizeof k.template_args, "%s", cxx);
  std::snprintf(k.label, sizeof k.label, "softmax_warp<%s, %d rows/block, a slice per lane>", name,
                kRowsPerBlock);
  k.threads_per_block = 32 * kRowsPerBlock;
  k.function = reinterpret_cast<const void*>(softmax_warp_kernel<T>);
  return k;
}

}  // namespace

int softmax_kernels(KernelLaunch* out, int capacity) {
  const KernelLaunch all[] = {describe<__half>("__half", "half"),
                              describe<__nv_bfloat16>("__nv_bfloat16", "bf16"),
                              describe<float>("float", "fp32")};
  const int n = 3;
  for (int i = 0; i < n && i < capacity; ++i) out[i] = all[i];
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
  if (p.rows == 0 || p.cols == 0) return cudaSuccess;
  if (!p.x || !p.y) return cudaErrorInvalidValue;
  switch (p.dtype) {
    case DType::kFloat16:
      return launch<__half>(p, stream);
    case DType::kBFloat16:
      return launch<__nv_bfloat16>(p, stream);
    case DType::kFloat32:
      return launch<float>(p, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace cockpit_softmax
