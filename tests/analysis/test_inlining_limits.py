"""The limits of PTX .func inlining (kernelcheck.ir.inlining), shared with SASS subroutines:
recursion, nesting depth and inlined size each make the kernel not proven, saying which."""

from __future__ import annotations

from kernelcheck.analysis import symbolic
from kernelcheck.analysis.summary import analyze_kernel
from kernelcheck.ptx.parser import parse_ptx

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"


def _kernel(funcs: str, body: str):
    module = parse_ptx(HEADER + funcs + """
.visible .entry k(.param .u64 k_param_0)
{
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [k_param_0];
    cvta.to.global.u64 %rd2, %rd1;
""" + body + """
    ret;
}
""")
    return analyze_kernel(module, module.get_function("k"))


def _chain(depth: int) -> str:
    """f0 calls f1 ... calls f<depth-1>, which stores 7 through its pointer."""
    text = ""
    for k in range(depth - 1, -1, -1):
        inner = (f"{{ .param .b64 a{k}; st.param.b64 [a{k}], %rd1; call.uni f{k + 1}, (a{k}); }}"
                 if k < depth - 1 else "st.global.u32 [%rd1], 7;")
        text += f""".func f{k}(.param .b64 f{k}_p)
{{
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [f{k}_p];
    {inner}
    ret;
}}
"""
    return text


def _call_f0() -> str:
    return "    { .param .b64 a; st.param.b64 [a], %rd2; call.uni f0, (a); }\n"


def test_a_chain_within_the_depth_is_inlined():
    summary = _kernel(_chain(3), _call_f0())
    assert summary.kernel_class == "always", summary.reasons


def test_a_chain_past_the_depth_is_not_proven():
    summary = _kernel(_chain(symbolic.MAX_CALL_DEPTH + 1), _call_f0())
    assert summary.kernel_class == "not_proven"
    assert any(r.startswith(f"call depth over {symbolic.MAX_CALL_DEPTH}")
               for r in summary.reasons), summary.reasons


def test_recursion_is_named():
    funcs = """.func r(.param .b64 r_p)
{
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [r_p];
    st.global.u32 [%rd1], 7;
    { .param .b64 b; st.param.b64 [b], %rd1; call.uni r, (b); }
    ret;
}
"""
    summary = _kernel(funcs, "    { .param .b64 a; st.param.b64 [a], %rd2; "
                             "call.uni r, (a); }\n")
    assert summary.kernel_class == "not_proven"
    assert any(r.startswith("recursive call of r") for r in summary.reasons), summary.reasons


def test_the_inlined_size_is_bounded(monkeypatch):
    monkeypatch.setattr(symbolic, "MAX_INLINED_INSTRUCTIONS", 4)
    monkeypatch.setattr("kernelcheck.ir.inlining.MAX_INLINED_INSTRUCTIONS", 4)
    summary = _kernel(_chain(2), _call_f0())
    assert summary.kernel_class == "not_proven"
    assert any(r.startswith("inlined code over 4 instructions") for r in summary.reasons)
