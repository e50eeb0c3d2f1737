// Written by `cockpit tune` from workloads/attention/attention.tuned.json: each kept winner's -D values, per GPU arch.
// The build gate passes the values of the GPU it builds for; this table is for builds
// outside the cockpit and for a kernel that says how another arch's build launches. To go
// back to the source's values, delete the winner from attention.tuned.json and this file.
#pragma once

// X(sm, macro, value): sm 90 is sm_90
#define COCKPIT_TUNED(X) \
  /* sm_90 D=128: 1.18x the configuration before it, 1.06x SDPA FLASH on H100 (sm_90) (tune-20261124-062522) */ \
  X(90, COCKPIT_ATTN_D128_BM, 128) \
  X(90, COCKPIT_ATTN_D128_BN, 64) \
  X(90, COCKPIT_ATTN_D128_WARPS, 4) \
  X(90, COCKPIT_ATTN_D128_MINB, 1) \
  X(90, COCKPIT_ATTN_D128_STAGES, 1) \
  X(90, COCKPIT_ATTN_D128_O_SMEM, 1) \
  X(90, COCKPIT_ATTN_D128_Q_REGS, 0) \
  /* end of the table */
