"""References of the warp-level cases: shfl.sync transcribed from the pseudocode of PTX ISA
9.7.9.6, vote/match/redux from 9.7.12.9-9.7.12.11, lane masks from chapter 10."""

from __future__ import annotations

import numpy as np

from tests.conformance.reference.bits import signed, unsigned
from tests.conformance.reference.registry import Inputs, reference

#: (mode, b, c) of each shuffle in cases/warp/shfl.ptx, in order; b "%r9" is 31 - lane and
#: "%r10" is lane % 8
SHUFFLES = [("up", "1", "0"), ("up", "3", "0x1800"), ("down", "2", "0x1f"),
            ("down", "5", "0x100f"), ("bfly", "1", "0x1f"), ("bfly", "16", "0x1f"),
            ("bfly", "4", "0x1807"), ("idx", "5", "0x1f"), ("idx", "%r9", "0x1f"),
            ("idx", "3", "0x1807"), ("down", "%r10", "0x1f"), ("up", "0", "0"),
            ("idx", "33", "0x1f"), ("bfly", "7", "0x0f")]


def shfl(values: list[int], lane: int, mode: str, b: int, c: int) -> tuple[int, bool]:
    """The value lane ``lane`` receives and its predicate (9.7.9.6)."""
    bval, cval, mask = b & 0x1F, c & 0x1F, (c >> 8) & 0x1F
    max_lane = (lane & mask) | (cval & ~mask)
    min_lane = lane & mask
    if mode == "up":
        j = lane - bval
        pval = j >= max_lane
    elif mode == "down":
        j = lane + bval
        pval = j <= max_lane
    elif mode == "bfly":
        j = lane ^ bval
        pval = j <= max_lane
    else:
        j = min_lane | (bval & ~mask)
        pval = j <= max_lane
    if not pval:
        j = lane
    return values[j], pval


@reference("warp/shfl")
def shfl_case(inputs: Inputs) -> dict:
    threads = inputs.threads
    out = []
    for warp in range(threads // 32):
        values = [1000 + 32 * warp + lane for lane in range(32)]
        for lane in range(32):
            for mode, b, c in SHUFFLES:
                if b == "%r9":
                    bv = 31 - lane
                elif b == "%r10":
                    bv = lane % 8
                else:
                    bv = int(b, 0)
                value, pval = shfl(values, lane, mode, bv, int(c, 0))
                out.append(value | (0x10000 if pval else 0))
    return {"out": np.array(out, dtype="<u4")}


def _redux(values: list[int]) -> list[int]:
    s = [signed(v, 32) for v in values]
    u = [unsigned(v, 32) for v in values]
    and_, or_, xor = 0xFFFFFFFF, 0, 0
    for v in u:
        and_ &= v
        or_ |= v
        xor ^= v
    return [unsigned(sum(u), 32), unsigned(min(s), 32), max(u), and_, or_, xor,
            unsigned(max(s), 32)]


@reference("warp/vote")
def vote(inputs: Inputs) -> dict:
    vals = [unsigned(int(v), 32) for v in inputs["vals"]]
    out = []
    for warp in range(len(vals) // 32):
        v = vals[32 * warp:32 * warp + 32]
        q = [x & 1 == 1 for x in v]
        r = [x != 0xDEAD for x in v]
        word0 = (all(q) | any(q) << 1 | (all(q) or not any(q)) << 2 | all(r) << 3
                 | any(not x for x in r) << 4 | (all(r) or not any(r)) << 5)
        ballot = sum(1 << k for k, x in enumerate(q) if x)
        half = v[:16]
        half_ballot = sum(1 << k for k in range(16) if q[k])
        half_sum = unsigned(sum(half), 32)
        for lane in range(32):
            match_any = sum(1 << k for k, x in enumerate(v) if x == v[lane])
            words = [word0, ballot, match_any, 0, 0]  # words 3-4: see match_all
            words += _redux(v)
            if lane < 16:
                match_half = sum(1 << k for k in range(16) if v[k] == v[lane])
                words += [half_ballot, half_sum, match_half]
            else:
                words += [0x77777777] * 3
            words.append(0xFFFFFFFF)
            out += words
    return {"out": np.array(out, dtype="<u4")}


@reference("warp/vote_legacy")
def vote_legacy(inputs: Inputs) -> dict:
    """vote without .sync (9.7.12, deprecated form): the ballot has a 1 bit for each active lane
    whose predicate is true; .all is true when every active lane's predicate is, .any when one
    is, .uni when they are all equal. Word pairs 2-3 come from the lanes with v >= 10 only."""
    vals = [unsigned(int(v), 32) for v in inputs["vals"]]
    out = []

    def votes(q: list[bool], active: list[bool]) -> tuple[int, int]:
        taken = [x for x, a in zip(q, active, strict=True) if a]
        ballot = sum(1 << k for k in range(32) if q[k] and active[k])
        bits = all(taken) | any(taken) << 1
        return ballot, bits

    for warp in range(len(vals) // 32):
        v = vals[32 * warp:32 * warp + 32]
        q = [x & 1 == 1 for x in v]
        full_ballot, full_bits = votes(q, [True] * 32)
        full_bits |= (all(q) or not any(q)) << 2
        active = [x >= 10 for x in v]
        branch_ballot, branch_bits = votes(q, active)
        not_q = [not x for x, a in zip(q, active, strict=True) if a]
        branch_bits |= (all(not_q) or not any(not_q)) << 2
        for lane in range(32):
            out += [full_ballot, full_bits]
            out += [branch_ballot, branch_bits] if active[lane] else [0x77777777] * 2
    return {"out": np.array(out, dtype="<u4")}


@reference("warp/lanes")
def lanes(inputs: Inputs) -> dict:
    threads = inputs.spec.block[0]
    out = []
    for t in range(threads):
        lane = t % 32
        warp_size = min(32, threads - (t - lane))
        active = (1 << warp_size) - 1
        branch = sum(1 << k for k in range(warp_size) if k % 3 == 0)
        out += [lane, 1 << lane, (1 << lane) - 1, (1 << (lane + 1)) - 1,
                unsigned(~((1 << (lane + 1)) - 1), 32), unsigned(~((1 << lane) - 1), 32),
                active, branch if lane % 3 == 0 else 0]
    return {"out": np.array(out, dtype="<u4")}
