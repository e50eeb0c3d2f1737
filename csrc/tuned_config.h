// Written by `cockpit tune`: the tiles its confirmations kept, per GPU architecture and
// head dim. csrc/attention.cu includes this file; a build for one arch uses that arch's
// entry, else one for every arch (sm 0), else its hand-picked tile. Delete the file to go
// back to the hand-picked tiles; -DCOCKPIT_ATTN_D128_BN=... on the command line still wins.
#pragma once

// {sm, D, BM, BN, warps, min blocks/SM, K/V stages, O staged in smem, Q in registers,
//  opt-in shared memory per block of that arch}
#define COCKPIT_ATTN_TUNED_TILES \
  /* sm_90 D=128: BM128 BN64 4w mb1 1st O:smem Q:smem. 1.18x the configuration before it, 1.06x SDPA FLASH on H100 (sm_90) (tune-20261124-062522) */ \
  {90, 128, 128, 64, 4, 1, 1, 1, 0, 232448}, \
  /* end of the table */
