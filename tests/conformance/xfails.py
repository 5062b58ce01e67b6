"""Cases the emulator does not pass yet, each with what is missing or wrong.

Every entry is an ``xfail(strict=True)``: when the emulator gains the instruction or the fix,
the case passes, pytest reports XPASS(strict) as a failure, and the entry must go.
"""

XFAILS: dict[str, str] = {
    # -- integer
    # -- bits
    # -- compare
    # -- float
    "float/gen_approx_ex2_bf16_ftz": "ex2.approx.ftz.bf16/bf16x2 keep subnormal results instead "
                                     "of flushing them to zero",
    "float/gen_approx_rsqrt_ftz_f64": "rsqrt.approx.ftz.f64 is not supported",
    "float/gen_approx_rcp_f64": "rcp.approx.ftz.f64 computes 1/a from the whole operand: the "
                                "lower word is not zero, subnormal inputs and results are not "
                                "flushed",
    # -- convert
    "convert/gen_cvt_f32_ftz_half": "cvt.rn.ftz.f16.f32 flushes subnormal f16 results to zero "
                                    "(.ftz applies to single-precision values only)",
    "convert/gen_cvt_f16_ftz_half": "cvt.ftz.f32.f16 flushes subnormal f16 inputs to zero "
                                    "(.ftz applies to single-precision values only)",
    # -- memory
    "memory/gen_cp_async_bulk": "fence.proxy.async, which orders the shared stores before "
                                "cp.async.bulk reads them, is not supported",
    # -- matrix
    "matrix/gen_mma_f16_m8n8k4": "mma.sync.aligned.m8n8k4 on .f16 is not supported",
    **{f"matrix/gen_wmma_bf16_{shape}": "wmma.load.a/.b on .bf16 take eight registers; the "
                                        "ISA's .bf16 fragments hold four (m16n16k16), two or "
                                        "eight (m8n32k16, m32n8k16)"
       for shape in ("m16n16k16", "m8n32k16", "m32n8k16")},
    # -- atomics
    "control/gen_policy_global": "createpolicy.range.global (the optional state space) is not "
                                 "supported",
    # -- warp
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
