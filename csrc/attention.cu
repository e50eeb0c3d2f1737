// cockpit_attn: FlashAttention-2 style forward kernel (sm_80+: mma.sync, ldmatrix, cp.async).
//
// No torch/ATen/c10/pybind header here, on purpose: this file compiles in seconds with plain
//   nvcc -std=c++17 -O3 -Xptxas=-v -lineinfo -arch=sm_89 -c csrc/attention.cu
// and must also build under torch's default nvcc flags (__CUDA_NO_HALF_OPERATORS__ and friends),
// so it uses only the conversion intrinsics, never half/bfloat16 operators.
//
// Algorithm (per block): one tile of kBlockM query rows of one (batch, head); each warp owns 32
// of those rows (two MMA row tiles that share every K and V fragment they load; 16 with the
// knobs below). Q is loaded once into shared memory, and read again (ldmatrix) at every K tile,
// which keeps the registers for the accumulators. The block then walks the K/V tiles of kBlockN
// keys:
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
// above the diagonal are never visited (the loop stops at the block's last row), and blocks are
// scheduled heaviest first.

#include "attention.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

namespace cockpit_attn {
namespace {

// ---------------------------------------------------------------------------------------------
// Tile configuration, per head dim and per GPU architecture.
//
// The hand-picked tiles (kDefaultTiles) are the L4's (sm_89, the smallest target): FlashAttention-2's
// own tiles, 4 warps of 32 rows, Q read from shared memory, each small enough for two blocks per SM
// in the L4's 100 KB of shared memory:
//   D = 64 : BM=128, BN=128, 1 stage -> 16 + 16 + 16 = 48 KB
//   D = 128: BM=128, BN=32,  1 stage -> 32 +  8 +  8 = 48 KB   (BN=64's 64 KB leaves one block)
// `cockpit tune` keeps a winner per architecture and head dim in workloads/attention/attention.tuned.json;
// the build gate passes the winner of the GPU it builds for as -D knobs (below), and tune rewrites
// tuned_config.h with every arch's winners (COCKPIT_TUNED(X): X(sm, macro, value)), which this file
// reads to say how a build for another arch launches (the H100's D=128 tile is BM128 BN64, 1.20x
// the L4's there; an L4 build keeps BN32). Which architecture a build is for: nvcc's
// __CUDA_ARCH_LIST__ when the build targets exactly one (the build gate and `cockpit tune` build for
// the GPU present; an `a` suffix is the same arch). A build for several archs at once uses the
// hand-picked tiles everywhere, so the host's launch and every device's code agree;
// -DCOCKPIT_ATTN_SM=90 names the arch by hand.
// Above 48 KB the launcher opts in with cudaFuncSetAttribute(MaxDynamicSharedMemorySize); a
// static_assert holds the build's tile to its arch's opt-in limit (the L4's 99 KB for a build of
// several archs) unless COCKPIT_ATTN_MAX_SMEM names another.
// ---------------------------------------------------------------------------------------------
#define COCKPIT_ATTN_NARGS_(a, b, c, d, e, f, g, h, n, ...) n
#define COCKPIT_ATTN_NARGS(...) COCKPIT_ATTN_NARGS_(__VA_ARGS__, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#if !defined(COCKPIT_ATTN_SM) && defined(__CUDA_ARCH_LIST__)
#if COCKPIT_ATTN_NARGS(__CUDA_ARCH_LIST__) == 1
#define COCKPIT_ATTN_SM (__CUDA_ARCH_LIST__ / 10)
#endif
#endif
#ifndef COCKPIT_ATTN_SM
#define COCKPIT_ATTN_SM 0  // not one arch: the hand-picked tiles
#endif

// One tile: for `sm` (90 = sm_90; 0 = every arch) and head dim `d`. `smem_limit`: the opt-in
// shared memory per block of the arch it is built for.
struct Tile {
  int sm, d, bm, bn, warps, minb, stages, o_smem, q_regs, smem_limit;
};

// `cockpit tune`'s kept winners, when it kept any: tuned_config.h's COCKPIT_TUNED(X), one
// X(sm, macro, value) per knob of each arch's winner. Without the file: the hand-picked tiles.
#if __has_include("tuned_config.h")
#include "tuned_config.h"
#endif
#ifndef COCKPIT_TUNED
#define COCKPIT_TUNED(X)
#endif

struct TunedDefine {
  int sm;
  const char* macro;
  int value;
};
#define COCKPIT_ATTN_TUNED_ENTRY(sm, macro, value) TunedDefine{sm, #macro, value},
constexpr TunedDefine kTunedDefines[] = {COCKPIT_TUNED(COCKPIT_ATTN_TUNED_ENTRY) TunedDefine{-1, "", 0}};

constexpr int kL4SmemPerBlock = 99 * 1024;  // the L4's opt-in limit per block (101376 bytes)
constexpr int kDefaultSmemPerBlock = 48 * 1024;  // without the opt-in, on every arch
constexpr Tile kDefaultTiles[] = {
    // sm, D,  BM,  BN, warps, minb, stages, O in smem, Q in regs
    {0, 64, 128, 128, 4, 2, 1, 0, 0, kL4SmemPerBlock},  // minb 2: 255 regs/thread; O staged spills on sm_89
    {0, 128, 128, 32, 4, 1, 1, 1, 0, kL4SmemPerBlock},  // 255 registers/thread, no spills (sm_89, sm_90)
};
// The knobs' macros per head dim, in the Tile's order (bm, bn, warps, minb, stages, o_smem, q_regs).
constexpr const char* kKnobMacros[2][7] = {
    {"COCKPIT_ATTN_D64_BM", "COCKPIT_ATTN_D64_BN", "COCKPIT_ATTN_D64_WARPS", "COCKPIT_ATTN_D64_MINB",
     "COCKPIT_ATTN_D64_STAGES", "COCKPIT_ATTN_D64_O_SMEM", "COCKPIT_ATTN_D64_Q_REGS"},
    {"COCKPIT_ATTN_D128_BM", "COCKPIT_ATTN_D128_BN", "COCKPIT_ATTN_D128_WARPS", "COCKPIT_ATTN_D128_MINB",
     "COCKPIT_ATTN_D128_STAGES", "COCKPIT_ATTN_D128_O_SMEM", "COCKPIT_ATTN_D128_Q_REGS"},
};

constexpr bool same_name(const char* a, const char* b) {
  while (*a != 0 && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

// A build by the cockpit (its build gate, its tune) passes this arch's winner (or the configuration
// it tries) as -D knobs and says so with COCKPIT_TUNED_FLAGS: the tuned file is then the one source
// of this build's tile, and the header and the command line each speak of their own archs only.
#ifdef COCKPIT_TUNED_FLAGS
constexpr bool kKnobsFromFlags = true;
#else
constexpr bool kKnobsFromFlags = false;
#endif

// The value the winner kept for `sm` gives knob `i` of head dim `d`, or -1.
constexpr int tuned_knob(int sm, int d, int i) {
  if (kKnobsFromFlags && sm == COCKPIT_ATTN_SM) return -1;  // this build's own: the -D knobs say it
  for (const TunedDefine& t : kTunedDefines)
    if (sm > 0 && t.sm == sm && same_name(t.macro, kKnobMacros[d == 128 ? 1 : 0][i])) return t.value;
  return -1;
}

// The opt-in shared memory per block of an arch (CUDA's compute capability tables).
constexpr int smem_optin(int sm) {
  return (sm == 80 || sm == 87) ? 163 * 1024 : (sm == 90 || sm == 100) ? 227 * 1024 : kL4SmemPerBlock;
}

// The tile a build for `sm` uses for head dim `d`: its arch's kept winner over the hand-picked one.
constexpr Tile tile_for(int sm, int d) {
  Tile t{sm, d, 0, 0, 0, 0, 0, 0, 0, sm > 0 ? smem_optin(sm) : kL4SmemPerBlock};
  for (const Tile& h : kDefaultTiles)
    if (h.d == d) t = Tile{sm, d, h.bm, h.bn, h.warps, h.minb, h.stages, h.o_smem, h.q_regs, t.smem_limit};
  int* fields[7] = {&t.bm, &t.bn, &t.warps, &t.minb, &t.stages, &t.o_smem, &t.q_regs};
  for (int i = 0; i < 7; ++i)
    if (tuned_knob(sm, d, i) >= 0) *fields[i] = tuned_knob(sm, d, i);
  return t;
}

// Tuning knobs, per head dim, on the command line: -DCOCKPIT_ATTN_D64_BM=64 etc. (what `cockpit
// tune` compiles each configuration with) win over both tables.
//   BM      query rows per block
//   BN      keys per K/V tile
//   WARPS   warps per block; each owns BM / WARPS query rows: 16 or 32 (one or two MMA row tiles,
//           two share every K and V fragment they load); BM / 32 when only BM is given
//   MINB    __launch_bounds__ minimum blocks per SM: caps registers at 64K / (threads x MINB)
//   STAGES  K/V buffers: 1 = V_j streams in while S_j is computed and K_{j+1} while P_j V_j is
//           (FlashAttention-2's order, one K and one V tile); 2 = double buffered: K/V_{j+1}
//           stream in while all of tile j is computed, one barrier per tile
//   O_SMEM  1 = O staged through shared memory for 128-bit stores; 0 = each thread stores its
//           own 32-bit pairs straight from registers
//   Q_REGS  1 = the warp's Q fragments stay in registers for the whole K/V loop; 0 = they are
//           read again from shared memory (ldmatrix) at every K tile, which frees D/4 registers
//           per 16 rows: what lets a warp own 32 rows (every K and V fragment it loads serves
//           two MMA row tiles, half the shared-memory traffic per MMA) without spilling
#if defined(COCKPIT_ATTN_D64_BM)
#define COCKPIT_ATTN_D64_BM_SET COCKPIT_ATTN_D64_BM
#else
#define COCKPIT_ATTN_D64_BM_SET -1
#endif
#if defined(COCKPIT_ATTN_D64_BN)
#define COCKPIT_ATTN_D64_BN_SET COCKPIT_ATTN_D64_BN
#else
#define COCKPIT_ATTN_D64_BN_SET -1
#endif
#if defined(COCKPIT_ATTN_D64_WARPS)
#define COCKPIT_ATTN_D64_WARPS_SET COCKPIT_ATTN_D64_WARPS
#else
#define COCKPIT_ATTN_D64_WARPS_SET -1
#endif
#if defined(COCKPIT_ATTN_D64_MINB)
#define COCKPIT_ATTN_D64_MINB_SET COCKPIT_ATTN_D64_MINB
#else
#define COCKPIT_ATTN_D64_MINB_SET -1
#endif
#if defined(COCKPIT_ATTN_D64_STAGES)
#define COCKPIT_ATTN_D64_STAGES_SET COCKPIT_ATTN_D64_STAGES
#else
#define COCKPIT_ATTN_D64_STAGES_SET -1
#endif
#if defined(COCKPIT_ATTN_D64_O_SMEM)
#define COCKPIT_ATTN_D64_O_SMEM_SET COCKPIT_ATTN_D64_O_SMEM
#else
#define COCKPIT_ATTN_D64_O_SMEM_SET -1
#endif
#if defined(COCKPIT_ATTN_D64_Q_REGS)
#define COCKPIT_ATTN_D64_Q_REGS_SET COCKPIT_ATTN_D64_Q_REGS
#else
#define COCKPIT_ATTN_D64_Q_REGS_SET -1
#endif
#if defined(COCKPIT_ATTN_D128_BM)
#define COCKPIT_ATTN_D128_BM_SET COCKPIT_ATTN_D128_BM
#else
#define COCKPIT_ATTN_D128_BM_SET -1
#endif
#if defined(COCKPIT_ATTN_D128_BN)
#define COCKPIT_ATTN_D128_BN_SET COCKPIT_ATTN_D128_BN
#else
#define COCKPIT_ATTN_D128_BN_SET -1
#endif
#if defined(COCKPIT_ATTN_D128_WARPS)
#define COCKPIT_ATTN_D128_WARPS_SET COCKPIT_ATTN_D128_WARPS
#else
#define COCKPIT_ATTN_D128_WARPS_SET -1
#endif
#if defined(COCKPIT_ATTN_D128_MINB)
#define COCKPIT_ATTN_D128_MINB_SET COCKPIT_ATTN_D128_MINB
#else
#define COCKPIT_ATTN_D128_MINB_SET -1
#endif
#if defined(COCKPIT_ATTN_D128_STAGES)
#define COCKPIT_ATTN_D128_STAGES_SET COCKPIT_ATTN_D128_STAGES
#else
#define COCKPIT_ATTN_D128_STAGES_SET -1
#endif
#if defined(COCKPIT_ATTN_D128_O_SMEM)
#define COCKPIT_ATTN_D128_O_SMEM_SET COCKPIT_ATTN_D128_O_SMEM
#else
#define COCKPIT_ATTN_D128_O_SMEM_SET -1
#endif
#if defined(COCKPIT_ATTN_D128_Q_REGS)
#define COCKPIT_ATTN_D128_Q_REGS_SET COCKPIT_ATTN_D128_Q_REGS
#else
#define COCKPIT_ATTN_D128_Q_REGS_SET -1
#endif

// The knobs given on the command line for head dim D (-1: not given).
template <int D>
struct KnobsGiven;
template <>
struct KnobsGiven<64> {
  static constexpr int v[7] = {COCKPIT_ATTN_D64_BM_SET,    COCKPIT_ATTN_D64_BN_SET,
                               COCKPIT_ATTN_D64_WARPS_SET, COCKPIT_ATTN_D64_MINB_SET,
                               COCKPIT_ATTN_D64_STAGES_SET, COCKPIT_ATTN_D64_O_SMEM_SET,
                               COCKPIT_ATTN_D64_Q_REGS_SET};
};
template <>
struct KnobsGiven<128> {
  static constexpr int v[7] = {COCKPIT_ATTN_D128_BM_SET,    COCKPIT_ATTN_D128_BN_SET,
                               COCKPIT_ATTN_D128_WARPS_SET, COCKPIT_ATTN_D128_MINB_SET,
                               COCKPIT_ATTN_D128_STAGES_SET, COCKPIT_ATTN_D128_O_SMEM_SET,
                               COCKPIT_ATTN_D128_Q_REGS_SET};
};

constexpr int given_or(int given, int otherwise) { return given >= 0 ? given : otherwise; }

// A knob given on the command line, as it applies to a build for `sm`: from the cockpit, this
// arch's winner or a tune's configuration, which says nothing of another arch's build; by hand, an
// override for every arch unless it only repeats this arch's kept value.
constexpr int given_for(int sm, int d, int i, int given) {
  if (sm == COCKPIT_ATTN_SM) return given;
  if (kKnobsFromFlags) return -1;
  return (given >= 0 && given == tuned_knob(COCKPIT_ATTN_SM, d, i)) ? -1 : given;
}

// A build for `sm`: its tile with the command line's knobs applied.
template <int D>
constexpr Tile build_tile(int sm) {
  const Tile t = tile_for(sm, D);
  int k[7] = {};
  for (int i = 0; i < 7; ++i) k[i] = given_for(sm, D, i, KnobsGiven<D>::v[i]);
  const int bm = given_or(k[0], t.bm);
  const int warps = given_or(k[2], k[0] >= 0 ? bm / 32 : t.warps);
  return Tile{t.sm, D, bm, given_or(k[1], t.bn), warps, given_or(k[3], t.minb),
              given_or(k[4], t.stages), given_or(k[5], t.o_smem), given_or(k[6], t.q_regs),
              t.smem_limit};
}

template <int D>
struct KernelConfig {
  static constexpr Tile kTile = build_tile<D>(COCKPIT_ATTN_SM);
  static constexpr int kBlockM = kTile.bm;
  static constexpr int kBlockN = kTile.bn;
  static constexpr int kWarps = kTile.warps;
  static constexpr int kMinBlocksPerSM = kTile.minb;
  static constexpr int kStages = kTile.stages;
  static constexpr bool kStageOInSmem = kTile.o_smem != 0;
  static constexpr bool kQInRegs = kTile.q_regs != 0;
#ifdef COCKPIT_ATTN_MAX_SMEM
  static constexpr int kMaxSmem = COCKPIT_ATTN_MAX_SMEM;
#else
  static constexpr int kMaxSmem = kTile.smem_limit;
#endif
};

constexpr bool needs_smem_opt_in(int bytes) { return bytes > kDefaultSmemPerBlock; }

constexpr int tile_smem_bytes(const Tile& t) {
  return (t.bm + 2 * t.stages * t.bn) * t.d * 2;  // Q + stages x (K + V), 2 bytes per element
}

template <int D>
constexpr int smem_bytes() {
  return tile_smem_bytes(KernelConfig<D>::kTile);
}

// What the kernel accepts; `cockpit tune` checks the same rules before it compiles anything
// (cockpit/tune/space.py), so a configuration that fails here is never handed to nvcc by it.
template <int D>
constexpr bool config_ok() {
  using Cfg = KernelConfig<D>;
  constexpr int kThreads = Cfg::kWarps * 32;
  return Cfg::kWarps >= 1 && kThreads <= 1024 && Cfg::kBlockN % 16 == 0 &&
         (Cfg::kBlockM == 16 * Cfg::kWarps || Cfg::kBlockM == 32 * Cfg::kWarps) &&
         (Cfg::kBlockM * D / 8) % kThreads == 0 && (Cfg::kBlockN * D / 8) % kThreads == 0 &&
         (Cfg::kStages == 1 || Cfg::kStages == 2) && Cfg::kMinBlocksPerSM >= 1;
}

static_assert(config_ok<64>(),
              "D=64 config: BM = 16 or 32 x WARPS, BN a multiple of 16, tiles split evenly over "
              "the threads, STAGES 1 or 2");
static_assert(config_ok<128>(),
              "D=128 config: BM = 16 or 32 x WARPS, BN a multiple of 16, tiles split evenly over "
              "the threads, STAGES 1 or 2");
static_assert(smem_bytes<64>() <= KernelConfig<64>::kMaxSmem,
              "D=64 tile exceeds the opt-in shared memory per block of the arch it is for (the "
              "L4's 99 KB for the hand-picked tiles) unless COCKPIT_ATTN_MAX_SMEM says otherwise");
static_assert(smem_bytes<128>() <= KernelConfig<128>::kMaxSmem,
              "D=128 tile exceeds the opt-in shared memory per block of the arch it is for (the "
              "L4's 99 KB for the hand-picked tiles) unless COCKPIT_ATTN_MAX_SMEM says otherwise");

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

// Shared-memory addresses of one lane's ldmatrix rows in a swizzled [rows][D] tile, for every
// k-step of 16 columns. The lane reads row R + rl, chunk 2 * ks + b, where R (a multiple of 8
// rows) and ks are compile-time after unrolling and rl, b are the lane's own. Since R keeps
// rl & 7 and 2 * ks leaves bit 0 to b, the swizzled chunk is 8 * (ks / 4) + ((2 * (ks % 4)) ^ c0)
// with c0 = b ^ (rl & 7): four registers hold every address, the rest is an immediate offset
// (instead of ptxas keeping one computed address per (row tile, k-step) live across the loop).
template <int D>
struct LaneRows {
  static_assert(D % 64 == 0, "the swizzle spans 8 chunks: D is a multiple of 64");
  uint32_t addr[4];

  __device__ __forceinline__ LaneRows(const void* tile, int rl, int b) {
    const uint32_t base = smem_u32(tile);
    const int c0 = b ^ (rl & 7);
#pragma unroll
    for (int i = 0; i < 4; ++i) addr[i] = base + 2u * static_cast<uint32_t>(rl * D + (((2 * i) ^ c0) << 3));
  }
  // Row R (a multiple of 8), k-step ks: both compile-time constants once the loops unroll.
  __device__ __forceinline__ uint32_t at(int R, int ks) const {
    return addr[ks & 3] + 2u * static_cast<uint32_t>(R * D + (ks >> 2) * 64);
  }
};

// cp.async ROWS x D elements, rows [row0, row0 + ROWS) of `src` (row stride `ld` elements),
// into the swizzled smem tile `dst`; rows at or past `nrows` are zero-filled. Each thread copies
// one 16-byte chunk column of every kThreads / (D / 8)-th row, stepping one global pointer. The
// empty asm makes each step opaque: left to itself, ptxas hoists one 64-bit address per copy out
// of the K/V loop and keeps them all live, and at 32 query rows per warp those registers spill.
template <typename T, int D, int ROWS, int kThreads>
__device__ __forceinline__ void load_tile(T* dst, const T* src, int64_t ld, int row0, int nrows,
                                          int tid) {
  constexpr int kChunks = D / 8;
  constexpr int kRowStep = kThreads / kChunks;  // rows one pass of the block covers
  static_assert(kThreads % kChunks == 0 && ROWS % kRowStep == 0,
                "tile chunks must divide evenly over the block");
  const int c = tid % kChunks;
  const int r0 = tid / kChunks;
  const T* g = src + static_cast<int64_t>(row0 + r0) * ld + c * 8;
  const int64_t step = kRowStep * ld;
#pragma unroll
  for (int r = r0, it = 0; it < ROWS / kRowStep; ++it, r += kRowStep) {
    const bool pred = row0 + r < nrows;
    cp_async_16(smem_u32(dst + swz<D>(r, c)), pred ? g : src, pred);
    g += step;
    asm volatile("" : "+l"(g));
  }
}

// ---------------------------------------------------------------------------------------------
// The kernel.
// ---------------------------------------------------------------------------------------------
template <typename T, int D, int BM, int BN, int kWarps, int kMinBlocks, bool kCausal>
__global__ void __launch_bounds__(kWarps * 32, kMinBlocks)
    attn_fwd_kernel(const AttnParams p, const float scale_log2) {
  // The pipeline depth and O's store path come from the head dim's config rather than from
  // template arguments: the kernel keeps the name ptxas, ncu and the launch table pair it by.
  using Cfg = KernelConfig<D>;
  constexpr int kStages = Cfg::kStages;
  constexpr int kThreads = kWarps * 32;
  constexpr int kChunks = D / 8;
  constexpr bool kBF16 = ElemTraits<T>::kIsBF16;
  constexpr int kRowTiles = BM / (16 * kWarps);  // 16-row MMA tiles per warp
  constexpr int kWarpRows = 16 * kRowTiles;
  static_assert(BM == kWarpRows * kWarps && (kRowTiles == 1 || kRowTiles == 2),
                "each warp owns 16 or 32 query rows");
  static_assert(D % 16 == 0 && BN % 16 == 0, "tile dims must be multiples of 16");
  static_assert(kStages == 1 || kStages == 2, "one or two K/V stages");

  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* sQ = reinterpret_cast<T*>(smem_raw);
  T* sK = sQ + BM * D;             // kStages K tiles
  T* sV = sK + kStages * BN * D;   // kStages V tiles

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
  const int row_base = m0 + warp * kWarpRows;  // this warp's first query row

  const T* q = static_cast<const T*>(p.q) + b * p.q_stride.batch + h * p.q_stride.head;
  const T* k = static_cast<const T*>(p.k) + b * p.k_stride.batch + h * p.k_stride.head;
  const T* v = static_cast<const T*>(p.v) + b * p.v_stride.batch + h * p.v_stride.head;
  T* o = static_cast<T*>(p.o) + b * p.o_stride.batch + h * p.o_stride.head;

  const int n_end = kCausal ? min(S, m0 + BM) : S;
  const int n_tiles = (n_end + BN - 1) / BN;

  // Prologue: Q tile and the first K tile (and V tile, when double buffered).
  load_tile<T, D, BM, kThreads>(sQ, q, p.q_stride.row, m0, S, tid);
  load_tile<T, D, BN, kThreads>(sK, k, p.k_stride.row, 0, S, tid);
  if constexpr (kStages == 2) load_tile<T, D, BN, kThreads>(sV, v, p.v_stride.row, 0, S, tid);
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();
  if (p.scale < 0.f) {
    // softmax(scale Q K^T) = softmax(|scale| (-Q) K^T): flipping the sign bits negates fp16 and
    // bf16 exactly, and the softmax below may then assume a positive scale (scale_log2 > 0).
    uint32_t* q32 = reinterpret_cast<uint32_t*>(sQ);
    for (int i = tid; i < BM * D / 2; i += kThreads) q32[i] ^= 0x80008000u;
    __syncthreads();
  }

  // Q fragments of this warp's rows: in registers for the whole loop (kQInRegs), else read
  // again from shared memory at every K tile, one k-step at a time. Only this warp reads its
  // rows of sQ, so nothing else needs to wait for them.
  constexpr bool kQInRegs = Cfg::kQInRegs;
  uint32_t qf[kRowTiles][kQInRegs ? D / 16 : 1][4];
  // ldmatrix rows: Q (A operand) rows lane & 15, chunk 2kk + lane / 16; K (B operand, n-major)
  // rows lane & 7 + 8 (lane / 16), chunk 2kk + (lane / 8) & 1; V (B operand, transposed) rows
  // lane & 7 + 8 ((lane / 8) & 1), chunk 2dd + lane / 16.
  const LaneRows<D> q_rows(sQ + warp * kWarpRows * D, lane & 15, lane >> 4);
  const LaneRows<D> k_rows(sK, (lane & 7) + ((lane >> 4) << 3), (lane >> 3) & 1);
  const LaneRows<D> v_rows(sV, (lane & 7) + (((lane >> 3) & 1) << 3), lane >> 4);
  auto load_q = [&](uint32_t(&frag)[4], int mt, int kk) { ldmatrix_x4(frag, q_rows.at(mt * 16, kk)); };
  if constexpr (kQInRegs) {
#pragma unroll
    for (int mt = 0; mt < kRowTiles; ++mt) {
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) load_q(qf[mt][kk], mt, kk);
    }
  }

  float acc_o[kRowTiles][D / 8][4];
#pragma unroll
  for (int mt = 0; mt < kRowTiles; ++mt) {
#pragma unroll
    for (int i = 0; i < D / 8; ++i) {
#pragma unroll
      for (int e = 0; e < 4; ++e) acc_o[mt][i][e] = 0.f;
    }
  }
  float row_max[kRowTiles][2];
  float row_sum[kRowTiles][2];  // per-thread partial sums; reduced over the quad at the end
#pragma unroll
  for (int mt = 0; mt < kRowTiles; ++mt) {
    row_max[mt][0] = row_max[mt][1] = -INFINITY;
    row_sum[mt][0] = row_sum[mt][1] = 0.f;
  }

  for (int j = 0; j < n_tiles; ++j) {
    const int n0 = j * BN;
    // This tile's K and V buffers; when double buffered, K/V_{j+1} stream into the others,
    // which every warp finished reading in the last tile.
    int stage_rows = 0;  // this tile's buffer, in rows of the K and V tiles
    if constexpr (kStages == 1) {
      // V_j streams in while S_j is computed.
      load_tile<T, D, BN, kThreads>(sV, v, p.v_stride.row, n0, S, tid);
    } else {
      const int cur = (j & 1) * BN * D;
      stage_rows = (j & 1) * BN;
      if (j + 1 < n_tiles) {
        load_tile<T, D, BN, kThreads>(sK + (BN * D - cur), k, p.k_stride.row, n0 + BN, S, tid);
        load_tile<T, D, BN, kThreads>(sV + (BN * D - cur), v, p.v_stride.row, n0 + BN, S, tid);
      }
    }
    cp_async_commit();

    // Every warp computes every tile of its block, also one wholly above its own rows under
    // causal masking (its scores are all masked: alpha 1, P 0): it would only wait at the
    // tile's barrier, and skipping it cost registers that spilled at 32 rows per warp.
    uint32_t pf[kRowTiles][BN / 16][4];  // P as the A operand of P V
    {  // S_j = Q K_j^T, its online softmax, and P_j packed
      float acc_s[kRowTiles][BN / 8][4];
#pragma unroll
      for (int mt = 0; mt < kRowTiles; ++mt) {
#pragma unroll
        for (int i = 0; i < BN / 8; ++i) {
#pragma unroll
          for (int e = 0; e < 4; ++e) acc_s[mt][i][e] = 0.f;
        }
      }
      // S = Q K^T; each K fragment serves every row tile of the warp.
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        constexpr int kq = 0;  // the one k-step slot when Q is read from shared memory
        if constexpr (!kQInRegs) {
#pragma unroll
          for (int mt = 0; mt < kRowTiles; ++mt) load_q(qf[mt][kq], mt, kk);
        }
        const int qk = kQInRegs ? kk : kq;
#pragma unroll
        for (int nn = 0; nn < BN / 16; ++nn) {
          uint32_t kb[4];
          ldmatrix_x4(kb, k_rows.at(stage_rows + nn * 16, kk));
#pragma unroll
          for (int mt = 0; mt < kRowTiles; ++mt) {
            mma_16816<kBF16>(acc_s[mt][2 * nn], qf[mt][qk], kb[0], kb[1]);
            mma_16816<kBF16>(acc_s[mt][2 * nn + 1], qf[mt][qk], kb[2], kb[3]);
          }
        }
      }

#pragma unroll
      for (int mt = 0; mt < kRowTiles; ++mt) {
        const int tile_row = row_base + mt * 16;
        // Raw scores are masked and their row max taken; the scale goes into the exp2's FMA
        // (p = 2^(s c - m c)), which needs c > 0: a negative scale negated Q above, and the
        // launcher keeps c away from 0.
        const bool need_mask = (n0 + BN > S) || (kCausal && n0 + BN - 1 > tile_row);
        if (need_mask) {
          // Key n0 + 2t + c is masked at or past the row's limit (S, or row + 1 when causal):
          // one limit per row held, compared with compile-time column offsets c.
#pragma unroll
          for (int hr = 0; hr < 2; ++hr) {
            const int row = tile_row + g + 8 * hr;
            const int lim = (kCausal ? min(S, row + 1) : S) - (n0 + 2 * t);
#pragma unroll
            for (int i = 0; i < BN / 8; ++i) {
              if (i * 8 >= lim) acc_s[mt][i][2 * hr] = -INFINITY;
              if (i * 8 + 1 >= lim) acc_s[mt][i][2 * hr + 1] = -INFINITY;
            }
          }
        }

        // Online softmax for the two rows this thread holds (g and g + 8).
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          float mx = row_max[mt][hr];
#pragma unroll
          for (int i = 0; i < BN / 8; ++i) {
            mx = fmaxf(mx, fmaxf(acc_s[mt][i][2 * hr], acc_s[mt][i][2 * hr + 1]));
          }
          mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
          mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
          // A row with every key masked so far keeps max -inf: subtract 0 instead (no NaN).
          const float m_use = (mx == -INFINITY) ? 0.f : mx * scale_log2;
          const float alpha = exp2f(row_max[mt][hr] * scale_log2 - m_use);
          row_max[mt][hr] = mx;
          float sum = 0.f;
#pragma unroll
          for (int i = 0; i < BN / 8; ++i) {
            const float p0 = exp2f(fmaf(acc_s[mt][i][2 * hr], scale_log2, -m_use));
            const float p1 = exp2f(fmaf(acc_s[mt][i][2 * hr + 1], scale_log2, -m_use));
            acc_s[mt][i][2 * hr] = p0;
            acc_s[mt][i][2 * hr + 1] = p1;
            sum += p0 + p1;
          }
          row_sum[mt][hr] = row_sum[mt][hr] * alpha + sum;
#pragma unroll
          for (int i = 0; i < D / 8; ++i) {
            acc_o[mt][i][2 * hr] *= alpha;
            acc_o[mt][i][2 * hr + 1] *= alpha;
          }
        }

        // The S accumulators of n-tiles 2kk and 2kk+1 are exactly the A fragment of k-step kk.
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk) {
          pf[mt][kk][0] = ElemTraits<T>::pack(acc_s[mt][2 * kk][0], acc_s[mt][2 * kk][1]);
          pf[mt][kk][1] = ElemTraits<T>::pack(acc_s[mt][2 * kk][2], acc_s[mt][2 * kk][3]);
          pf[mt][kk][2] = ElemTraits<T>::pack(acc_s[mt][2 * kk + 1][0], acc_s[mt][2 * kk + 1][1]);
          pf[mt][kk][3] = ElemTraits<T>::pack(acc_s[mt][2 * kk + 1][2], acc_s[mt][2 * kk + 1][3]);
        }
      }
    }

    if constexpr (kStages == 1) {
      // V_j has landed and every warp is done reading K_j: start K_{j+1}.
      cp_async_wait<0>();
      __syncthreads();
      if (j + 1 < n_tiles) {
        load_tile<T, D, BN, kThreads>(sK, k, p.k_stride.row, n0 + BN, S, tid);
      }
      cp_async_commit();
    }

    // O += P V; each V fragment serves every row tile of the warp.
    {
#pragma unroll
      for (int kk = 0; kk < BN / 16; ++kk) {
#pragma unroll
        for (int dd = 0; dd < D / 16; ++dd) {
          uint32_t vb[4];
          ldmatrix_x4_trans(vb, v_rows.at(stage_rows + kk * 16, dd));
#pragma unroll
          for (int mt = 0; mt < kRowTiles; ++mt) {
            mma_16816<kBF16>(acc_o[mt][2 * dd], pf[mt][kk], vb[0], vb[1]);
            mma_16816<kBF16>(acc_o[mt][2 * dd + 1], pf[mt][kk], vb[2], vb[3]);
          }
        }
      }
    }

    // The next tile has landed (K_{j+1}, or K/V_{j+1}) and every warp is done reading this one.
    cp_async_wait<0>();
    __syncthreads();
  }

  // Epilogue: O / l.
  float inv[kRowTiles][2];
#pragma unroll
  for (int mt = 0; mt < kRowTiles; ++mt) {
#pragma unroll
    for (int hr = 0; hr < 2; ++hr) {
      float l = row_sum[mt][hr];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      inv[mt][hr] = (l > 0.f) ? 1.f / l : 0.f;
    }
  }
  if constexpr (Cfg::kStageOInSmem) {
    // Staged through this warp's own rows of sQ (read only by this warp, and its last read
    // was in the loop above), then 128-bit coalesced stores of the in-range rows.
#pragma unroll
    for (int mt = 0; mt < kRowTiles; ++mt) {
#pragma unroll
      for (int i = 0; i < D / 8; ++i) {
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int r = warp * kWarpRows + mt * 16 + g + hr * 8;
          uint32_t* dst = reinterpret_cast<uint32_t*>(sQ + swz<D>(r, i) + 2 * t);
          *dst = ElemTraits<T>::pack(acc_o[mt][i][2 * hr] * inv[mt][hr],
                                     acc_o[mt][i][2 * hr + 1] * inv[mt][hr]);
        }
      }
    }
    __syncwarp();
#pragma unroll
    for (int it = 0; it < kWarpRows * kChunks / 32; ++it) {
      const int i = it * 32 + lane;
      const int r = i / kChunks;
      const int c = i % kChunks;
      const int gr = row_base + r;
      if (gr < S) {
        const uint4 val = *reinterpret_cast<const uint4*>(sQ + swz<D>(warp * kWarpRows + r, c));
        *reinterpret_cast<uint4*>(o + static_cast<int64_t>(gr) * p.o_stride.row + c * 8) = val;
      }
    }
  } else {
    // Straight from the accumulators: each thread its two adjacent elements per 8 columns.
#pragma unroll
    for (int mt = 0; mt < kRowTiles; ++mt) {
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        const int gr = row_base + mt * 16 + g + hr * 8;
        if (gr < S) {
          T* dst = o + static_cast<int64_t>(gr) * p.o_stride.row + 2 * t;
#pragma unroll
          for (int i = 0; i < D / 8; ++i) {
            *reinterpret_cast<uint32_t*>(dst + i * 8) = ElemTraits<T>::pack(
                acc_o[mt][i][2 * hr] * inv[mt][hr], acc_o[mt][i][2 * hr + 1] * inv[mt][hr]);
          }
        }
      }
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
  static constexpr int kSmem = smem_bytes<D>();
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
  // The kernel folds |scale| log2(e) into its exp2 FMAs and negates Q itself for a negative
  // scale. A zero scale (uniform weights) runs as 1e-30: every exponent is then 0 to fp32's
  // precision, so the weights are exactly uniform, while masked keys still give 2^-inf = 0.
  const float scale_log2 = fmaxf(fabsf(p.scale) * 1.4426950408889634f, 1e-30f);
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

// A kernel as a build with tile `t` launches it (no function pointer: that build may be for
// another arch than this one).
template <typename T, int D, bool kCausal>
KernelLaunch describe_tile(const Tile& t) {
  KernelLaunch k{};
  std::snprintf(k.kernel, sizeof k.kernel, "attn_fwd_kernel");
  std::snprintf(k.template_args, sizeof k.template_args, "%s, %d, %d, %d, %d, %d, %s",
                TypeName<T>::kCxx, D, t.bm, t.bn, t.warps, t.minb, kCausal ? "true" : "false");
  // The other knobs are named only where they leave the hand-picked shape (32 rows per warp,
  // one K/V stage, Q read from shared memory), so the default labels stay short.
  char knobs[48] = "";
  if (t.bm != 32 * t.warps || t.stages != 1 || t.q_regs) {
    std::snprintf(knobs, sizeof knobs, ", warps=%d, stages=%d%s%s", t.warps, t.stages,
                  t.o_smem ? "" : ", O direct", t.q_regs ? ", Q regs" : "");
  }
  std::snprintf(k.label, sizeof k.label, "attn_fwd<%s, D=%d, BM=%d, BN=%d%s%s>",
                TypeName<T>::kShort, D, t.bm, t.bn, kCausal ? ", causal" : "", knobs);
  k.threads_per_block = t.warps * 32;
  k.dynamic_smem_bytes = tile_smem_bytes(t);
  k.smem_opt_in = needs_smem_opt_in(k.dynamic_smem_bytes);
  return k;
}

template <typename T, int D, bool kCausal>
KernelLaunch describe() {
  using F = Forward<T, D, kCausal>;
  KernelLaunch k = describe_tile<T, D, kCausal>(F::Cfg::kTile);
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
      return smem_bytes<64>();
    case 128:
      return smem_bytes<128>();
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

int attention_kernels_for(int sm, KernelLaunch* out, int capacity) {
  // The same instantiations as attention_kernels(), each with the tile a build for `sm` uses.
  const Tile t64 = build_tile<64>(sm), t128 = build_tile<128>(sm);
  const KernelLaunch all[] = {
      describe_tile<__half, 64, false>(t64),          describe_tile<__half, 64, true>(t64),
      describe_tile<__half, 128, false>(t128),        describe_tile<__half, 128, true>(t128),
      describe_tile<__nv_bfloat16, 64, false>(t64),   describe_tile<__nv_bfloat16, 64, true>(t64),
      describe_tile<__nv_bfloat16, 128, false>(t128), describe_tile<__nv_bfloat16, 128, true>(t128),
  };
  const int n = static_cast<int>(sizeof all / sizeof all[0]);
  for (int i = 0; i < n && i < capacity; ++i) out[i] = all[i];
  return n;
}

int attention_build_arch() { return COCKPIT_ATTN_SM; }

int attention_tuned_archs(int* out, int capacity) {
  int n = 0;
  for (const TunedDefine& t : kTunedDefines) {
    if (t.sm <= 0) continue;
    bool seen = false;
    for (int i = 0; i < n && i < capacity; ++i) seen = seen || out[i] == t.sm;
    if (!seen && n < capacity) out[n++] = t.sm;
  }
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
