// Written by `cockpit tune`: the kernel configuration its confirmation kept, per head dim.
// csrc/attention.cu includes this file when it exists; delete it to go back to the
// hand-picked defaults. A -DCOCKPIT_ATTN_... on the command line still overrides it.
#pragma once

// D=64: BM128 BN64 8w mb2 1st O:smem.
#ifndef COCKPIT_ATTN_D64_BM
#define COCKPIT_ATTN_D64_BM 128
#endif
#ifndef COCKPIT_ATTN_D64_BN
#define COCKPIT_ATTN_D64_BN 64
#endif
#ifndef COCKPIT_ATTN_D64_WARPS
#define COCKPIT_ATTN_D64_WARPS 8
#endif
#ifndef COCKPIT_ATTN_D64_MINB
#define COCKPIT_ATTN_D64_MINB 2
#endif
#ifndef COCKPIT_ATTN_D64_STAGES
#define COCKPIT_ATTN_D64_STAGES 1
#endif
#ifndef COCKPIT_ATTN_D64_O_SMEM
#define COCKPIT_ATTN_D64_O_SMEM 1
#endif
#ifndef COCKPIT_ATTN_D64_Q_REGS
#define COCKPIT_ATTN_D64_Q_REGS 1
#endif

// D=128: BM128 BN128 8w mb1 2st O:smem Q:smem. 1.11x the configuration before it, 0.94x SDPA FLASH on H100 (sm_90) (tune-20261123-085213)
#ifndef COCKPIT_ATTN_D128_BM
#define COCKPIT_ATTN_D128_BM 128
#endif
#ifndef COCKPIT_ATTN_D128_BN
#define COCKPIT_ATTN_D128_BN 128
#endif
#ifndef COCKPIT_ATTN_D128_WARPS
#define COCKPIT_ATTN_D128_WARPS 8
#endif
#ifndef COCKPIT_ATTN_D128_MINB
#define COCKPIT_ATTN_D128_MINB 1
#endif
#ifndef COCKPIT_ATTN_D128_STAGES
#define COCKPIT_ATTN_D128_STAGES 2
#endif
#ifndef COCKPIT_ATTN_D128_O_SMEM
#define COCKPIT_ATTN_D128_O_SMEM 1
#endif
#ifndef COCKPIT_ATTN_D128_Q_REGS
#define COCKPIT_ATTN_D128_Q_REGS 0
#endif

// 160 KB of shared memory per block: more than an L4 (sm_89) allows,
// so this build runs on the GPU it was tuned for, not on an L4 (the build gate says so).
#ifndef COCKPIT_ATTN_MAX_SMEM
#define COCKPIT_ATTN_MAX_SMEM 232448
#endif
