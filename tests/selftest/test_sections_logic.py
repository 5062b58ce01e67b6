"""Pieces of the sections that need no device: approximate instructions and their tolerance,
kernel families of a PyTorch run's report."""

from __future__ import annotations

import numpy as np

from kernelcheck.selftest.emulator_check import APPROXIMATE, approximate_in, within_tolerance
from kernelcheck.selftest.torch_check import family_counts, kernel_family


def test_approximate_instructions_are_found_with_their_stated_precision():
    found = approximate_in("rsqrt.approx.ftz.f32 %f1, %f0;\n div.full.f32 %f2, %f1, %f0;\n"
                           "ex2.approx.f16x2 %r1, %r0; sqrt.rn.f32 %f3, %f2;")
    assert found["rsqrt.approx.f32"] == APPROXIMATE["rsqrt.approx.f32"]
    assert found["div.full.f32"] == ("ulp", 2.0)
    assert "ex2.approx.f16x2" in found and "sqrt.rn.f32" not in found


def test_tolerance_accepts_last_bits_and_rejects_real_differences():
    a = np.linspace(-3, 3, 64, dtype=np.float32)
    b = np.nextafter(a, np.float32(10))
    assert within_tolerance(a.tobytes(), b.tobytes(), 1e-6)
    c = a.copy()
    c[5] += 0.5
    assert not within_tolerance(a.tobytes(), c.tobytes(), 1e-6)
    assert not within_tolerance(b"\x00" * 6, b"\x00" * 5 + b"\x01", 1.0)


def test_launches_are_counted_by_kernel_family():
    report = {"kernels": [
        {"name": "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelIJ", "idempotent": 0,
         "not_idempotent": 30, "not_proven": 0},
        {"name": "triton_poi_fused_gelu_0", "idempotent": 10, "not_idempotent": 0,
         "not_proven": 0},
        {"name": "triton_red_fused_native_layer_norm_1", "idempotent": 9,
         "not_idempotent": 0, "not_proven": 1},
        {"name": "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n", "idempotent": 20,
         "not_idempotent": 0, "not_proven": 0}]}
    counts = family_counts(report)
    assert counts["foreach"] == {"kernels": 1, "idempotent": 0, "not_idempotent": 30,
                                 "not_proven": 0}
    assert counts["triton"]["kernels"] == 2 and counts["triton"]["not_proven"] == 1
    assert kernel_family("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n") == "gemm"
