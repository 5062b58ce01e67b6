"""Cases the emulator does not pass yet, each with what is missing or wrong.

Every entry is an ``xfail(strict=True)``: when the emulator gains the instruction or the fix,
the case passes, pytest reports XPASS(strict) as a failure, and the entry must go.
"""

XFAILS: dict[str, str] = {
    # -- integer
    "integer/mad_hi_sat": "mad.hi.sat.s32 and mad24.hi.sat.s32 wrap instead of saturating",
    # -- bits
    "bits/bfe_s32": "bfe.s32 fills bits past the msb with 0 instead of the sign bit "
                    "a[min(pos+len-1, 31)]",
    "bits/bfe_s64": "bfe.s64 crashes the emulator (OverflowError: Python int too large to "
                    "convert to C long)",
    # -- compare
    # -- float
    "float/f32_modes": "add, sub and fma .f32 ignore the directed rounding modes .rz, .rm, .rp "
                       "(results are rounded to nearest)",
    "float/f64_modes": "add, mul and fma .f64 ignore the directed rounding modes .rz, .rm, .rp",
    "float/fma_f64": "fma.rn.f64 is not fused: a * b is rounded before c is added",
    "float/gen_mad_f32_directed": "mad.rm.f32 gives +0.0 for an exact zero sum of opposite "
                                  "signs, which rounds to -0.0 toward negative infinity (IEEE "
                                  "754 6.3)",
    "float/gen_mad_f64_directed": "mad.f64 ignores the directed rounding modes .rz, .rm, .rp",
    "float/gen_sub_f64_directed": "sub.rm.f64 gives +0.0 for x - x, which is -0.0 rounding "
                                  "toward negative infinity (IEEE 754 6.3)",
    "float/gen_f64_directed": "div, rcp and sqrt .f64 ignore .rz/.rm/.rp: overflow gives "
                              "infinity instead of the largest finite value, inexact quotients "
                              "and roots are rounded to nearest",
    "float/gen_approx_ex2_bf16_ftz": "ex2.approx.ftz.bf16/bf16x2 keep subnormal results instead "
                                     "of flushing them to zero",
    "float/gen_approx_rsqrt_ftz_f64": "rsqrt.approx.ftz.f64 is not supported",
    "float/gen_approx_rcp_f64": "rcp.approx.ftz.f64 computes 1/a from the whole operand: the "
                                "lower word is not zero, subnormal inputs and results are not "
                                "flushed",
    # -- convert
    "convert/float_s64": "float-to-s64 conversions of values at or above 2^63 (+inf included) "
                         "give 0 instead of INT64_MAX",
    "convert/gen_cvt_f32_s64": "cvt.r*i.s64.f32 of values at or above 2^63 (+inf included) "
                               "gives 0 instead of INT64_MAX",
    "convert/gen_cvt_f64_s64": "cvt.r*i.s64.f64 of values at or above 2^63 (+inf included) "
                               "gives 0 instead of INT64_MAX",
    "convert/gen_cvt_f16_s64": "cvt.r*i.s64.f16 of +inf gives 0 instead of INT64_MAX",
    "convert/gen_cvt_bf16_s64": "cvt.r*i.s64.bf16 of values at or above 2^63 (+inf included) "
                                "gives 0 instead of INT64_MAX",
    "convert/gen_cvt_f32_ftz_half": "cvt.rn.ftz.f16.f32 flushes subnormal f16 results to zero "
                                    "(.ftz applies to single-precision values only)",
    "convert/gen_cvt_f16_ftz_half": "cvt.ftz.f32.f16 flushes subnormal f16 inputs to zero "
                                    "(.ftz applies to single-precision values only)",
    # -- memory
    "memory/b128": ".b128 registers crash the emulator when the module is loaded (KeyError "
                   "'b128')",
    "memory/gen_cp_async_bulk": "fence.proxy.async, which orders the shared stores before "
                                "cp.async.bulk reads them, is not supported",
    # -- matrix
    "matrix/gen_mma_f16_m8n8k4": "mma.sync.aligned.m8n8k4 on .f16 is not supported",
    **{f"matrix/gen_wmma_bf16_{shape}": "wmma.load.a/.b on .bf16 take eight registers; the "
                                        "ISA's .bf16 fragments hold four (m16n16k16), two or "
                                        "eight (m8n32k16, m32n8k16)"
       for shape in ("m16n16k16", "m8n32k16", "m32n8k16")},
    # -- atomics
    "atomics/half": "atom/red .add.noftz with .f16, .f16x2 and .bf16x2 are not supported",
    **{f"atomics/gen_red_{kind}": "red crashes the emulator (ValueError: zip() argument 2 is "
                                  "longer than argument 1)"
       for kind in ("int", "half", "bf16", "f32", "f64", "f32_subnormal")},
    "control/gen_policy_global": "createpolicy.range.global (the optional state space) is not "
                                 "supported",
    # -- warp
    "warp/match_all": "match.all.sync with a predicate destination crashes the emulator "
                      "(IndexError)",
    "warp/gen_match_all_b64": "match.all.sync.b64 without a predicate destination leaves a "
                              "malformed result: the next instruction reading it crashes the "
                              "emulator (IndexError)",
    # -- video
    "video/video_select": "the PTX front end rejects operand byte/half selectors (%r.b0, "
                          "%r.h1), and the video instructions are not supported",
    # -- registers
    "registers/shadowing": "a register declared in a nested { } block does not hide the outer "
                           "register of the same name: the two are merged",
    "registers/bare_names": "register names without '%' are read as symbols (not a valid "
                            "destination) and rejected in a predicate pair (d|p)",
    "registers/declaration_lists": "a .reg list mixing a parameterized name (%r<4>) with plain "
                                   "names declares only the parameterized ones (undeclared "
                                   "register %x)",
    "registers/vectors": "the PTX front end rejects vector-register components (%v.x)",
    "registers/warp_size": "the constant WARP_SZ is not supported",
}
