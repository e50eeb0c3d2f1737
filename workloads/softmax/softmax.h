// cockpit_softmax: a fused row softmax, the cockpit's example C++ workload.
//
// Plain C++ (no torch): softmax.cu includes only this header and the CUDA headers, so a
// kernel-only edit recompiles in seconds. binding.cpp is the one torch translation unit.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

namespace cockpit_softmax {

enum class DType : int { kFloat16 = 0, kBFloat16 = 1, kFloat32 = 2 };

// y = softmax(x) along each row of contiguous (rows, cols) tensors of one dtype. Any base
// pointer aligned to its element size works: the kernels peel the unaligned head of each row.
struct SoftmaxParams {
  const void* x = nullptr;
  void* y = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;  // at most INT32_MAX
  DType dtype = DType::kFloat16;
};

// Launches the kernel for this row length on `stream`. Returns cudaErrorInvalidValue for
// shapes or pointers it does not support, else the launch's error (cudaSuccess when queued).
cudaError_t softmax_forward(const SoftmaxParams& params, cudaStream_t stream);

// One kernel the launcher can launch, as it launches it: what the build gate checks against
// each GPU's limits (threads per block are invisible to ptxas).
struct KernelLaunch {
  char kernel[32];          // the __global__ function: "softmax_warp_kernel"
  char template_args[96];   // as c++filt prints them: "__half, 8, 4, 2"
  char label[96];           // for people: "softmax_warp<half, vec=8, 4 rows/block, 2 vec/lane>"
  int threads_per_block = 0;
  int dynamic_smem_bytes = 0;  // always 0: the block path's scratch is static
  bool smem_opt_in = false;
  const void* function = nullptr;
};

// What the CUDA runtime says about one kernel on the current device
// (cudaFuncGetAttributes, cudaOccupancyMaxActiveBlocksPerMultiprocessor).
struct KernelOccupancy {
  int blocks_per_sm = 0;
  int num_regs = 0;
  int local_bytes = 0;         // per thread: stack and spills
  int static_smem_bytes = 0;
  int max_dynamic_smem_bytes = 0;
  int binary_version = 0;      // the SASS the runtime loaded (90: sm_90)
  int ptx_version = 0;
};

// Every kernel instantiation the launcher can reach (dtype x path x cache size); returns how
// many there are and fills the first `capacity` of them.
int softmax_kernels(KernelLaunch* out, int capacity);

// The runtime's view of `kernel` on the current device. Without a GPU it returns the runtime's
// error (cudaErrorNoDevice ...) and leaves `out` untouched; the error is not left pending.
cudaError_t kernel_occupancy(const KernelLaunch& kernel, KernelOccupancy* out);

}  // namespace cockpit_softmax
