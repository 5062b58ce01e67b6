"""Cases the emulator does not pass yet, each with what is missing or wrong.

Every entry is an ``xfail(strict=True)``: when the emulator gains the instruction or the fix,
the case passes, pytest reports XPASS(strict) as a failure, and the entry must go.
"""

XFAILS: dict[str, str] = {
    # -- integer
    "integer/carry_mixed": "sub.cc leaves the borrow in CC.CF; hardware leaves the carry of "
                           "a + ~b + 1, so addc after sub.cc and subc after add.cc differ",
    "integer/mad_hi_sat": "mad.hi.sat.s32 and mad24.hi.sat.s32 wrap instead of saturating",
    # -- bits
    "bits/bfe_s32": "bfe.s32 fills bits past the msb with 0 instead of the sign bit "
                    "a[min(pos+len-1, 31)]",
    "bits/bfe_s64": "bfe.s64 crashes the emulator (OverflowError: Python int too large to "
                    "convert to C long)",
    "bits/bmsk": "bmsk is not supported",
    "bits/fns": "fns is not supported",
    "bits/szext": "szext is not supported",
    # -- compare
    "compare/half_x2": "setp.f16x2, setp.bf16x2, set.u32.f16x2 and set.f16x2.f16x2 are not "
                       "supported",
    "compare/set_f16": "set with a .f16 destination crashes the emulator (ValueError: Invalid "
                       "integer data type 'f')",
    "compare/half_ftz": "setp.ftz.f16 does not flush subnormal halves to zero",
    # -- float
    "float/f32_modes": "add, sub and fma .f32 ignore the directed rounding modes .rz, .rm, .rp "
                       "(results are rounded to nearest)",
    "float/f64_modes": "add, mul and fma .f64 ignore the directed rounding modes .rz, .rm, .rp",
    "float/fma_f64": "fma.rn.f64 is not fused: a * b is rounded before c is added",
    "float/div_sqrt_modes": "rcp .rz/.rm/.rp, sqrt.rp (f32, f64), div.rz.f64 and rcp.rm.f64 "
                            "ignore the rounding mode",
    "float/half_ftz": ".ftz on f16/f16x2 arithmetic does not flush subnormal halves",
    "float/relu": "fma.relu (f16, bf16, f16x2) does not clamp negative results to zero",
    # -- convert
    "convert/pack_x2": "cvt.f16x2.f32 and cvt.bf16x2.f32 d, a, b do not pack cvt(a) into the "
                       "upper half and cvt(b) into the lower half (d holds a value derived from "
                       "a alone)",
    "convert/relu": "cvt .relu does not clamp negative results (f16, bf16), and the f16x2 form "
                    "does not pack",
    "convert/narrow_modes": "cvt.rz.bf16.f32 rounds to nearest, cvt.rna.tf32.f32 returns the "
                            "f32 unchanged, .satfinite to f16/bf16 is ignored",
    "convert/float_s64": "float-to-s64 conversions of values at or above 2^63 (+inf included) "
                         "give 0 instead of INT64_MAX",
    "convert/fp8_pack": "cvt to e4m3x2/e5m2x2 (FP8) is not supported",
    "convert/fp8_unpack": "cvt from e4m3x2/e5m2x2 (FP8) to f16x2 is not supported",
    "convert/cvt_pack": "cvt.pack is not supported",
    # -- memory
    "memory/b128": ".b128 registers crash the emulator when the module is loaded (KeyError "
                   "'b128')",
    "memory/isspacep": "isspacep is not supported",
    # -- atomics
    "atomics/half": "atom/red .add.noftz with .f16, .f16x2 and .bf16x2 are not supported",
    # -- warp
    "warp/match_all": "match.all.sync with a predicate destination crashes the emulator "
                      "(IndexError)",
    "warp/warp_sync": "bar.warp.sync and elect.sync are not supported",
    # -- matrix
    "matrix/mma_f16": "mma.sync is not supported",
    "matrix/mma_bf16": "mma.sync is not supported",
    "matrix/mma_s8": "mma.sync is not supported",
    "matrix/ldmatrix": "ldmatrix is not supported",
    "matrix/stmatrix": "stmatrix is not supported",
    "matrix/cp_async": "cp.async (and its commit_group/wait_group/wait_all) is not supported",
    # -- video
    "video/video": "the video instructions (vadd ... vset, vadd2 ... vabsdiff4) are not "
                   "supported",
    "video/video_select": "the PTX front end rejects operand byte/half selectors (%r.b0, "
                          "%r.h1), and the video instructions are not supported",
    # -- barrier
    "barrier/bar_red": "bar.red / barrier.red (popc, and, or) are not supported",
    # -- registers
    "registers/shadowing": "a register declared in a nested { } block does not hide the outer "
                           "register of the same name: the two are merged",
    "registers/bare_names": "register names without '%' are read as symbols (not a valid "
                            "destination) and rejected in a predicate pair (d|p)",
    "registers/vectors": "the PTX front end rejects vector-register components (%v.x)",
    "registers/warp_size": "the constant WARP_SZ is not supported",
    # -- CUDA C, judged by the host compiler
    "cuda/floats.dpoly_k": "fma.rn.f64 is not fused: a * b is rounded before c is added",
}
