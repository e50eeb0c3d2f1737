// cockpit_attn: attention forward, the cockpit's workload kernel.
//
// Plain C++ (no torch): attention.cu includes only this header and the CUDA headers, so
// a kernel-only edit recompiles in seconds. binding.cpp is the one torch translation unit.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

namespace cockpit_attn {

enum class DType : int { kFloat16 = 0, kBFloat16 = 1 };

// Strides in elements. The last dimension (head_dim) must be contiguous, every stride a
// multiple of 8 elements and every base pointer 16-byte aligned (128-bit loads and stores).
struct Strides {
  int64_t batch;
  int64_t head;
  int64_t row;
};

// O = softmax(scale * Q K^T [+ causal mask]) V for tensors laid out (B, H, S, D).
// Self-attention: Q, K, V and O share B, H, S and D.
struct AttnParams {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  Strides q_stride{}, k_stride{}, v_stride{}, o_stride{};
  int batch = 0;
  int heads = 0;
  int seqlen = 0;
  int head_dim = 0;        // 64 or 128
  float scale = 0.f;       // softmax scale, usually 1/sqrt(head_dim)
  bool causal = false;     // query i attends keys j <= i
  DType dtype = DType::kFloat16;
};

// Launches the forward kernel on `stream`. Returns cudaErrorInvalidValue for shapes or
// pointers it does not support, else the launch's error (cudaSuccess when queued).
cudaError_t attention_forward(const AttnParams& params, cudaStream_t stream);

// Dynamic shared memory per block (bytes) the forward kernel uses for this head_dim;
// 0 for an unsupported head_dim.
int attention_smem_bytes(int head_dim);

// One kernel the launcher can launch, as it launches it: what the build gate checks against
// each GPU's limits (threads and dynamic shared memory are invisible to ptxas).
struct KernelLaunch {
  char kernel[32];          // the __global__ function: "attn_fwd_kernel"
  char template_args[96];   // as c++filt prints them: "__half, 64, 128, 64, 8, 2, true"
  char label[96];           // for people: "attn_fwd<half, D=64, BM=128, BN=64, causal>"
  int threads_per_block = 0;
  int dynamic_smem_bytes = 0;  // per block
  bool smem_opt_in = false;    // the launcher raises cudaFuncAttributeMaxDynamicSharedMemorySize
  const void* function = nullptr;
};

// What the CUDA runtime says about one kernel on the current device, after the launcher's own
// shared-memory opt-in (cudaFuncGetAttributes, cudaOccupancyMaxActiveBlocksPerMultiprocessor).
struct KernelOccupancy {
  int blocks_per_sm = 0;
  int num_regs = 0;
  int local_bytes = 0;         // per thread: stack and spills
  int static_smem_bytes = 0;
  int max_dynamic_smem_bytes = 0;
  int binary_version = 0;      // the SASS the runtime loaded (90: sm_90), JIT-compiled or not
  int ptx_version = 0;
};

// Every forward kernel instantiation (dtype x head_dim x causal); returns how many there are
// and fills the first `capacity` of them.
int attention_kernels(KernelLaunch* out, int capacity);

// The same kernels as a build for architecture `sm` (89 = sm_89) would launch them, with that
// arch's tile (tuned_config.h's winner for it, else the hand-picked one); `function` is null.
// What the build gate judges another GPU by: this build's own tiles are for this build's arch.
int attention_kernels_for(int sm, KernelLaunch* out, int capacity);

// The arch this build's tiles are for (COCKPIT_ATTN_SM: 90 for an sm_90 build); 0 when the build
// targets several archs and every arch uses the hand-picked tiles.
int attention_build_arch();

// The archs tuned_config.h keeps a tile for; returns how many, fills the first `capacity`.
int attention_tuned_archs(int* out, int capacity);

// The runtime's view of `kernel` on the current device. Without a GPU it returns the runtime's
// error (cudaErrorNoDevice ...) and leaves `out` untouched; the error is not left pending.
cudaError_t kernel_occupancy(const KernelLaunch& kernel, KernelOccupancy* out);

}  // namespace cockpit_attn
