"""Planted work that escapes an event timer, for the kernel-records audit on the GPU: `PLANTED=<name>`
picks the candidate (the gates' children inherit it).

- honest: torch.softmax on the caller's stream.
- side: the softmax on a stream of its own that the caller's stream never waits for.
- joined: the same, with the caller's stream waiting for it (timed whole: named, not refused).
- thread: the softmax launched from a thread the call does not join.
"""

from __future__ import annotations

import os
import threading

import torch

from cockpit.workload import Reference, Workload, axes, rel_l2

_SIDE: list[torch.cuda.Stream] = []


def _side() -> torch.cuda.Stream:
    if not _SIDE:
        _SIDE.append(torch.cuda.Stream())
    return _SIDE[0]


def honest(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return out.copy_(torch.softmax(x, -1))


def side(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    s = _side()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        out.copy_(torch.softmax(x, -1))
    return out


def joined(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    side(x, out)
    torch.cuda.current_stream().wait_stream(_side())
    return out


def thread(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    def work() -> None:
        out.copy_(torch.softmax(x, -1))
    threading.Thread(target=work).start()
    return out


def make_inputs(seed: int, /, M: int, N: int) -> tuple[torch.Tensor]:
    gen = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.randn(M, N, generator=gen, device="cuda", dtype=torch.float32),)


WORKLOAD = Workload(
    name="escapes",
    candidates={"ours": {"honest": honest, "side": side, "joined": joined,
                         "thread": thread}[os.environ.get("PLANTED", "honest")]},
    references=(Reference("fp64", lambda x: torch.softmax(x.double(), -1).float(), oracle=True),
                Reference("torch.softmax", lambda x: torch.softmax(x, -1), baseline=True)),
    make_inputs=make_inputs,
    make_output=lambda x, **_: torch.empty_like(x),
    test_grid=axes(M=[64], N=[1024]),
    bench_grid=axes(M=[4096], N=[1024, 16384]),
    check=rel_l2(1e-5),
    bytes=lambda M, N: 4.0 * M * N * 2,
)
