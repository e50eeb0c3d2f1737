// cockpit_attn: FlashAttention-2 style forward kernel (sm_80+: mma.sync, ldmatrix, cp.async).
//
// No torch/ATen/c10/pybind header here, on purpose: this file compiles in seconds with plain
//   nvcc -std=c++17 -O3 -Xptxas=-v -lineinfo -arch=sm_89 -c csrc/attention.cu
// and must also build under torch's default nvcc flags (__CUDA_NO_HALF_OPERATORS__ and friends),
// so it uses only the conversion intrinsics, never half/bfloat16 operators.
//
// Algorithm (per block): one tile of kBlockM query rows of one (batch, head); each warp owns 16
// of those rows. Q is loaded once (cp.async -> smem -> ldmatrix into registers). The block then
// walks the K/V tiles of kBlockN keys:
//   S = Q K^T             mma.sync m16n8k16, fp32 accumulators, K fragments by ldmatrix
//   online softmax        running row max m and row sum l in fp32, exp2 with scale*log2(e)
//   O = O * alpha + P V   P re-packed from the S accumulators as the A operand (no smem trip),
//                         V fragments by ldmatrix.trans
// and writes O / l at the end (staged through shared memory for 128-bit stores).
// Loads overlap compute FlashAttention-2 style: V_j is fetched while S_j is computed, K_{j+1}
// while P_j V_j is computed. Shared-memory rows are XOR-swizzled in 16-byte chunks
// (chunk ^ (row & 7)) so cp.async stores and ldmatrix reads are bank-conflict free.
// Edges: rows/keys past seqlen are zero-filled by cp.async (src-size 0, nothing read) and keys
// past seqlen are masked to -inf; out-of-range rows are never stored. Causal: K/V tiles wholly
// above the diagonal are never visited (the loop stops at the block's last row), a warp skips
// the tiles wholly above its own 16 rows, and blocks are scheduled heaviest first.

#include "attention.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

namespace cockpit_attn {
namespace {

// ---------------------------------------------------------------------------------------------
// Tile configuration per head dim (measured on an H200, fp16, B=4 H=16 S=1k-8k: these beat
// BM=64 tiles and, for D=128, BN=64/32; see csrc/README.md).
// Shared memory per block: Q (kBlockM x D) + K (kBlockN x D) + V (kBlockN x D), fp16/bf16.
//   D = 64 : BM=128, BN=64  -> 16 + 8 + 8   = 32 KB
//   D = 128: BM=128, BN=128 -> 32 + 32 + 32 = 96 KB
// Both use dynamic shared memory; above 48 KB the launcher opts in with
// cudaFuncSetAttribute(MaxDynamicSharedMemorySize). The smallest target is the L4 (sm_89),
// whose per-block opt-in limit is 99 KB (101376 bytes): checked by static_assert below.
// (H100/H200 allow 227 KB per block.)
// ---------------------------------------------------------------------------------------------
constexpr int kL4MaxSmemPerBlock = 99 * 1024;
constexpr int kDefaultSmemPerBlock = 48 * 1024;  // without the opt-in, on every arch

constexpr bool needs_smem_opt_in(int bytes) { return bytes > kDefaultSmemPerBlock; }

// Tuning knobs: -DCOCKPIT_ATTN_D64_BM=... etc. override the defaults (warps = BM / 16).
#ifndef COCKPIT_ATTN_D64_BM
#define COCKPIT_ATTN_D64_BM 128
#endif
#ifndef COCKPIT_ATTN_D64_BN
#define COCKPIT_ATTN_D64_BN 64
#endif
#ifndef COCKPIT_ATTN_D64_MINB
#define COCKPIT_ATTN_D64_MINB 2  // 2 blocks/SM: caps registers at 128/thread
#endif
#ifndef COCKPIT_ATTN_D128_BM
#define COCKPIT_ATTN_D128_BM 128
#endif
#ifndef COCKPIT_ATTN_D128_BN
#define COCKPIT_ATTN_D128_BN 128
#endif
#ifndef COCKPIT_ATTN_D128_MINB
#define COCKPIT_ATTN_D128_MINB 1  // 255 registers/thread, no spills (ptxas -v, sm_89 and sm_90)
#endif

template <int D>
struct KernelConfig;

template <>
struct KernelConfig<64> {
  static constexpr int kBlockM = COCKPIT_ATTN_D64_BM;
  static constexpr int kBlockN = COCKPIT_ATTN_D64_BN;
  static constexpr int kWarps = kBlockM / 16;  // each warp owns 16 query rows
  static constexpr int kMinBlocksPerSM = COCKPIT_ATTN_D64_MINB;
};

template <>
struct KernelConfig<128> {
  static constexpr int kBlockM = COCKPIT_ATTN_D128_BM;
  static constexpr int kBlockN = COCKPIT_ATTN_D128_BN;
  static constexpr int kWarps = kBlockM / 16;
  static constexpr int kMinBlocksPerSM = COCKPIT_ATTN_D128_MINB;
};

template <int D, int BM, int BN>
constexpr int smem_bytes() {
  return (BM + 2 * BN) * D * 2;  // 2 bytes per fp16/bf16 element
}

static_assert(smem_bytes<64, KernelConfig<64>::kBlockM, KernelConfig<64>::kBlockN>() <=
                  kL4MaxSmemPerBlock,
              "D=64 tile exceeds the L4's 99 KB opt-in shared memory per block");
static_assert(smem_bytes<128, KernelConfig<128>::kBlockM, KernelConfig<128>::kBlockN>() <=
                  kL4MaxSmemPerBlock,
              "D=128 tile exceeds the L4's 99 KB opt-in shared memory per block");

// ---------------------------------------------------------------------------------------------
// Element types.
// ---------------------------------------------------------------------------------------------
template <typename T>
struct ElemTraits;

template <>
struct ElemTraits<__half> {
  static constexpr bool kIsBF16 = false;
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  }
};

template <>
struct ElemTraits<__nv_bfloat16> {
  static constexpr bool kIsBF16 = true;
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  }
};

// ---------------------------------------------------------------------------------------------
// PTX wrappers.
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte async copy global -> shared; when !pred nothing is read and the 16 bytes are zeroed.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, bool pred) {
  const int src_size = pred ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_size));
}

__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// D(16x8, f32) += A(16x16, row) * B(16x8, col)
template <bool kBF16>
__device__ __forceinline__ void mma_16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                          uint32_t b1) {
  if constexpr (kBF16) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Element offset of 16-byte chunk `chunk` of row `row` in a swizzled [rows][D] tile.
template <int D>
__device__ __forceinline__ int swz(int row, int chunk) {
  return row * D + ((chunk ^ (row & 7)) << 3);
}

// cp.async ROWS x D elements, rows [row0, row0 + ROWS) of `src` (row stride `ld` elements),
// into the swizzled smem tile `dst`; rows at or past `nrows` are zero-filled.
template <typename T, int D, int ROWS, int kThreads>
__device__ __forceinline__ void load_tile(T* dst, const T* src, int64_t ld, int row0, int nrows,
                                          int tid) {
  constexpr int kChunks = D / 8;
  constexpr int kTotal = ROWS * kChunks;
  static_assert(kTotal % kThreads == 0, "tile chunks must divide evenly over the block");
#pragma unroll
  for (int it = 0; it < kTotal / kThreads; ++it) {
    const int i = it * kThreads + tid;
    const int r = i / kChunks;
    const int c = i % kChunks;
    const int gr = row0 + r;
    const bool pred = gr < nrows;
    const T* g = src + (pred ? static_cast<int64_t>(gr) * ld : 0) + c * 8;
    cp_async_16(smem_u32(dst + swz<D>(r, c)), g, pred);
  }
}

// ---------------------------------------------------------------------------------------------
// The kernel.
// ---------------------------------------------------------------------------------------------
template <typename T, int D, int BM, int BN, int kWarps, int kMinBlocks, bool kCausal>
__global__ void __launch_bounds__(kWarps * 32, kMinBlocks)
    attn_fwd_kernel(const AttnParams p, const float scale_log2) {
  constexpr int kThreads = kWarps * 32;
  constexpr int kChunks = D / 8;
  constexpr bool kBF16 = ElemTraits<T>::kIsBF16;
  static_assert(BM == 16 * kWarps, "each warp owns 16 query rows");
  static_assert(D % 16 == 0 && BN % 16 == 0, "tile dims must be multiples of 16");

  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* sQ = reinterpret_cast<T*>(smem_raw);
  T* sK = sQ + BM * D;
  T* sV = sK + BN * D;

  const int S = p.seqlen;
  // Heaviest blocks first: under causal masking the last query tiles do the most work.
  const int m_block = gridDim.x - 1 - blockIdx.x;
  const int h = blockIdx.y;
  const int b = blockIdx.z;
  const int tid = threadIdx.x;
  const int warp = tid >> 5;
  const int lane = tid & 31;
  const int g = lane >> 2;  // mma group id: row within an 8-row half
  const int t = lane & 3;   // thread in group: column pair

  const int m0 = m_block * BM;
  const int row_base = m0 + warp * 16;  // this warp's first query row

  const T* q = static_cast<const T*>(p.q) + b * p.q_stride.batch + h * p.q_stride.head;
  const T* k = static_cast<const T*>(p.k) + b * p.k_stride.batch + h * p.k_stride.head;
  const T* v = static_cast<const T*>(p.v) + b * p.v_stride.batch + h * p.v_stride.head;
  T* o = static_cast<T*>(p.o) + b * p.o_stride.batch + h * p.o_stride.head;

  const int n_end = kCausal ? min(S, m0 + BM) : S;
  const int n_tiles = (n_end + BN - 1) / BN;

  // Prologue: Q tile and the first K tile.
  load_tile<T, D, BM, kThreads>(sQ, q, p.q_stride.row, m0, S, tid);
  load_tile<T, D, BN, kThreads>(sK, k, p.k_stride.row, 0, S, tid);
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();

  // Q fragments for this warp's 16 rows stay in registers for the whole loop.
  uint32_t qf[D / 16][4];
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
    const int r = warp * 16 + (lane & 15);
    const int c = kk * 2 + (lane >> 4);
    ldmatrix_x4(qf[kk], smem_u32(sQ + swz<D>(r, c)));
  }

  float acc_o[D / 8][4];
#pragma unroll
  for (int i = 0; i < D / 8; ++i) {
#pragma unroll
    for (int e = 0; e < 4; ++e) acc_o[i][e] = 0.f;
  }
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.f, 0.f};  // per-thread partial sums; reduced over the quad at the end

  for (int j = 0; j < n_tiles; ++j) {
    const int n0 = j * BN;

    // V_j streams in while S_j is computed.
    load_tile<T, D, BN, kThreads>(sV, v, p.v_stride.row, n0, S, tid);
    cp_async_commit();

    // Warp-uniform: under causal masking a tile wholly above this warp's rows contributes 0.
    const bool warp_skip = kCausal && (n0 > row_base + 15);

    uint32_t pf[BN / 16][4];  // P as the A operand of P V
    if (!warp_skip) {
      float acc_s[BN / 8][4];
#pragma unroll
      for (int i = 0; i < BN / 8; ++i) {
#pragma unroll
        for (int e = 0; e < 4; ++e) acc_s[i][e] = 0.f;
      }
      // S = Q K^T
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
        for (int nn = 0; nn < BN / 16; ++nn) {
          uint32_t kb[4];
          const int r = nn * 16 + (lane & 7) + ((lane >> 4) << 3);
          const int c = kk * 2 + ((lane >> 3) & 1);
          ldmatrix_x4(kb, smem_u32(sK + swz<D>(r, c)));
          mma_16816<kBF16>(acc_s[2 * nn], qf[kk], kb[0], kb[1]);
          mma_16816<kBF16>(acc_s[2 * nn + 1], qf[kk], kb[2], kb[3]);
        }
      }

      // Scale into the log2 domain, then mask (after scaling, so any sign of scale is safe).
#pragma unroll
      for (int i = 0; i < BN / 8; ++i) {
#pragma unroll
        for (int e = 0; e < 4; ++e) acc_s[i][e] *= scale_log2;
      }
      const bool need_mask = (n0 + BN > S) || (kCausal && n0 + BN - 1 > row_base);
      if (need_mask) {
#pragma unroll
        for (int i = 0; i < BN / 8; ++i) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int col = n0 + i * 8 + 2 * t + (e & 1);
            const int row = row_base + g + ((e >> 1) << 3);
            const bool masked = (col >= S) || (kCausal && col > row);
            if (masked) acc_s[i][e] = -INFINITY;
          }
        }
      }

      // Online softmax for the two rows this thread holds (g and g + 8).
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        float mx = row_max[hr];
#pragma unroll
        for (int i = 0; i < BN / 8; ++i) {
          mx = fmaxf(mx, fmaxf(acc_s[i][2 * hr], acc_s[i][2 * hr + 1]));
        }
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        // A row with every key masked so far keeps max -inf: subtract 0 instead (no NaN).
        const float m_use = (mx == -INFINITY) ? 0.f : mx;
        const float alpha = exp2f(row_max[hr] - m_use);
        row_max[hr] = mx;
        float sum = 0.f;
#pragma unroll
        for (int i = 0; i < BN / 8; ++i) {
          const float p0 = exp2f(acc_s[i][2 * hr] - m_use);
          const float p1 = exp2f(acc_s[i][2 * hr + 1] - m_use);
          acc_s[i][2 * hr] = p0;
          acc_s[i][2 * hr + 1] = p1;
          sum += p0 + p1;
        }
        row_sum[hr] = row_sum[hr] * alpha + sum;
#pragma unroll
        for (int i = 0; i < D / 8; ++i) {
          acc_o[i][2 * hr] *= alpha;
          acc_o[i][2 * hr + 1] *= alpha;
        }
      }

      // The S accumulators of n-tiles 2kk and 2kk+1 are exactly the A fragment of k-step kk.
#pragma unroll
      for (int kk = 0; kk < BN / 16; ++kk) {
        pf[kk][0] = ElemTraits<T>::pack(acc_s[2 * kk][0], acc_s[2 * kk][1]);
        pf[kk][1] = ElemTraits<T>::pack(acc_s[2 * kk][2], acc_s[2 * kk][3]);
        pf[kk][2] = ElemTraits<T>::pack(acc_s[2 * kk + 1][0], acc_s[2 * kk + 1][1]);
        pf[kk][3] = ElemTraits<T>::pack(acc_s[2 * kk + 1][2], acc_s[2 * kk + 1][3]);
      }
    }

    // V_j has landed and every warp is done reading K_j: start K_{j+1}.
    cp_async_wait<0>();
    __syncthreads();
    if (j + 1 < n_tiles) {
      load_tile<T, D, BN, kThreads>(sK, k, p.k_stride.row, n0 + BN, S, tid);
    }
    cp_async_commit();

    // O += P V
    if (!warp_skip) {
#pragma unroll
      for (int kk = 0; kk < BN / 16; ++kk) {
#pragma unroll
        for (int dd = 0; dd < D / 16; ++dd) {
          uint32_t vb[4];
          const int r = kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3);
          const int c = dd * 2 + (lane >> 4);
          ldmatrix_x4_trans(vb, smem_u32(sV + swz<D>(r, c)));
          mma_16816<kBF16>(acc_o[2 * dd], pf[kk], vb[0], vb[1]);
          mma_16816<kBF16>(acc_o[2 * dd + 1], pf[kk], vb[2], vb[3]);
        }
      }
    }

    // K_{j+1} has landed and every warp is done reading V_j.
    cp_async_wait<0>();
    __syncthreads();
  }

  // Epilogue: O / l, staged through this warp's own 16 rows of sQ (read only by this warp,
  // and only before the loop), then 128-bit coalesced stores of the in-range rows.
  float inv[2];
#pragma unroll
  for (int hr = 0; hr < 2; ++hr) {
    float l = row_sum[hr];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    inv[hr] = (l > 0.f) ? 1.f / l : 0.f;
  }
#pragma unroll
  for (int i = 0; i < D / 8; ++i) {
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      const int r = warp * 16 + g + hr * 8;
      uint32_t* dst = reinterpret_cast<uint32_t*>(sQ + swz<D>(r, i) + 2 * t);
      *dst = ElemTraits<T>::pack(acc_o[i][2 * hr] * inv[hr], acc_o[i][2 * hr + 1] * inv[hr]);
    }
  }
  __syncwarp();
#pragma unroll
  for (int it = 0; it < 16 * kChunks / 32; ++it) {
    const int i = it * 32 + lane;
    const int r = i / kChunks;
    const int c = i % kChunks;
    const int gr = row_base + r;
    if (gr < S) {
      const uint4 val = *reinterpret_cast<const uint4*>(sQ + swz<D>(warp * 16 + r, c));
      *reinterpret_cast<uint4*>(o + static_cast<int64_t>(gr) * p.o_stride.row + c * 8) = val;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Host side.
// ---------------------------------------------------------------------------------------------
// One instantiation of the kernel with the tile config of its head dim.
template <typename T, int D, bool kCausal>
struct Forward {
  using Cfg = KernelConfig<D>;
  static constexpr int kSmem = smem_bytes<D, Cfg::kBlockM, Cfg::kBlockN>();
  static constexpr int kThreads = Cfg::kWarps * 32;
  static constexpr auto kernel = attn_fwd_kernel<T, D, Cfg::kBlockM, Cfg::kBlockN, Cfg::kWarps,
                                                 Cfg::kMinBlocksPerSM, kCausal>;
};

// Above the 48 KB default a kernel needs the opt-in (cheap; per function, so the launcher sets
// it on every launch, and kernel_occupancy() does the same before it asks the runtime).
cudaError_t allow_smem(const void* kernel, int bytes) {
  if (!needs_smem_opt_in(bytes)) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}

template <typename T, int D, bool kCausal>
cudaError_t launch(const AttnParams& p, cudaStream_t stream) {
  using F = Forward<T, D, kCausal>;
  const cudaError_t err = allow_smem(reinterpret_cast<const void*>(F::kernel), F::kSmem);
  if (err != cudaSuccess) return err;
  const dim3 grid((p.seqlen + F::Cfg::kBlockM - 1) / F::Cfg::kBlockM, p.heads, p.batch);
  const dim3 block(F::kThreads);
  const float scale_log2 = p.scale * 1.4426950408889634f;  // log2(e)
  F::kernel<<<grid, block, F::kSmem, stream>>>(p, scale_log2);
  return cudaGetLastError();
}

template <typename T>
struct TypeName;
template <>
struct TypeName<__half> {
  static constexpr const char* kCxx = "__half";  // as c++filt prints it
  static constexpr const char* kShort = "half";
};
template <>
struct TypeName<__nv_bfloat16> {
  static constexpr const char* kCxx = "__nv_bfloat16";
  static constexpr const char* kShort = "bf16";
};

template <typename T, int D, bool kCausal>
KernelLaunch describe() {
  using F = Forward<T, D, kCausal>;
  using Cfg = typename F::Cfg;
  KernelLaunch k{};
  std::snprintf(k.kernel, sizeof k.kernel, "attn_fwd_kernel");
  std::snprintf(k.template_args, sizeof k.template_args, "%s, %d, %d, %d, %d, %d, %s",
                TypeName<T>::kCxx, D, Cfg::kBlockM, Cfg::kBlockN, Cfg::kWarps,
                Cfg::kMinBlocksPerSM, kCausal ? "true" : "false");
  std::snprintf(k.label, sizeof k.label, "attn_fwd<%s, D=%d, BM=%d, BN=%d%s>",
                TypeName<T>::kShort, D, Cfg::kBlockM, Cfg::kBlockN, kCausal ? ", causal" : "");
  k.threads_per_block = F::kThreads;
  k.dynamic_smem_bytes = F::kSmem;
  k.smem_opt_in = needs_smem_opt_in(F::kSmem);
  k.function = reinterpret_cast<const void*>(F::kernel);
  return k;
}

template <typename T, int D>
cudaError_t dispatch_causal(const AttnParams& p, cudaStream_t stream) {
  return p.causal ? launch<T, D, true>(p, stream) : launch<T, D, false>(p, stream);
}

template <typename T>
cudaError_t dispatch_head_dim(const AttnParams& p, cudaStream_t stream) {
  switch (p.head_dim) {
    case 64:
      return dispatch_causal<T, 64>(p, stream);
    case 128:
      return dispatch_causal<T, 128>(p, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

bool aligned16(const void* ptr) { return (reinterpret_cast<uintptr_t>(ptr) & 15u) == 0; }

bool strides_ok(const Strides& s) {
  return s.batch % 8 == 0 && s.head % 8 == 0 && s.row % 8 == 0;
}

}  // namespace

int attention_smem_bytes(int head_dim) {
  switch (head_dim) {
    case 64:
      return smem_bytes<64, KernelConfig<64>::kBlockM, KernelConfig<64>::kBlockN>();
    case 128:
      return smem_bytes<128, KernelConfig<128>::kBlockM, KernelConfig<128>::kBlockN>();
    default:
      return 0;
  }
}

int attention_kernels(KernelLaunch* out, int capacity) {
  // The same instantiations dispatch_head_dim() and dispatch_causal() can reach.
  const KernelLaunch all[] = {
      describe<__half, 64, false>(),         describe<__half, 64, true>(),
      describe<__half, 128, false>(),        describe<__half, 128, true>(),
      describe<__nv_bfloat16, 64, false>(),  describe<__nv_bfloat16, 64, true>(),
      describe<__nv_bfloat16, 128, false>(), describe<__nv_bfloat16, 128, true>(),
  };
  const int n = static_cast<int>(sizeof all / sizeof all[0]);
  for (int i = 0; i < n && i < capacity; ++i) out[i] = all[i];
  return n;
}

cudaError_t kernel_occupancy(const KernelLaunch& kernel, KernelOccupancy* out) {
  cudaFuncAttributes attr{};
  int blocks = 0;
  cudaError_t err = allow_smem(kernel.function, kernel.dynamic_smem_bytes);
  if (err == cudaSuccess) err = cudaFuncGetAttributes(&attr, kernel.function);
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

cudaError_t attention_forward(const AttnParams& p, cudaStream_t stream) {
  if (p.batch < 0 || p.heads < 0 || p.seqlen < 0) return cudaErrorInvalidValue;
  if (p.head_dim != 64 && p.head_dim != 128) return cudaErrorInvalidValue;
  if (p.batch == 0 || p.heads == 0 || p.seqlen == 0) return cudaSuccess;  // nothing to do
  if (p.heads > 65535 || p.batch > 65535) return cudaErrorInvalidValue;  // grid.y / grid.z
  if (!p.q || !p.k || !p.v || !p.o) return cudaErrorInvalidValue;
  if (!aligned16(p.q) || !aligned16(p.k) || !aligned16(p.v) || !aligned16(p.o)) {
    return cudaErrorInvalidValue;
  }
  if (!strides_ok(p.q_stride) || !strides_ok(p.k_stride) || !strides_ok(p.v_stride) ||
      !strides_ok(p.o_stride)) {
    return cudaErrorInvalidValue;
  }
  switch (p.dtype) {
    case DType::kFloat16:
      return dispatch_head_dim<__half>(p, stream);
    case DType::kBFloat16:
      return dispatch_head_dim<__nv_bfloat16>(p, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace cockpit_attn
