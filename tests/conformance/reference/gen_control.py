"""Generated sweeps of the synchronization, control-flow and address instructions, one block of
128 threads (four warps):

- barrier/bar (PTX ISA 9.7.13.1, 9.7.13.2): each thread stores its value to shared memory,
  waits, and reads another thread's; the .red forms reduce a predicate over the block
  (.popc counts, .and/.or combine);
- the instructions with no result a single thread can observe run between checked forms:
  fence/membar (9.7.13.4), nanosleep (9.7.19.6), pmevent (9.7.19.5), griddepcontrol
  (9.7.13.13), setmaxnreg (9.7.19.7), brkpt (9.7.19.3), prefetch/prefetchu (9.7.9.15),
  applypriority (9.7.9.16), discard (9.7.9.17, on scratch memory no one reads); createpolicy
  (9.7.9.18) makes the cache policies of loads whose values are checked;
- cvta (9.7.9.20) and isspacep (9.7.9.19): generic addresses of shared and constant data
  reach the same bytes, cvta.to undoes cvta, isspacep.shared::cta tells shared addresses from
  global ones (the .u32 forms of cvta need 32-bit addressing, which the toolchain no longer
  assembles: tests/conformance/not_ptx.py);
- call/ret.uni (9.7.13.3, 9.7.13.5) and brx.idx.uni (9.7.13.2) with a uniform index.

trap (9.7.19.4) is the hand-written case control/trap, which must fail.
"""

from __future__ import annotations

from tests.conformance.reference.registry import expect_failure
from tests.conformance.sweep import Form, Operand, Sweep, register

THREADS = 128


def value(i: int) -> int:
    """Thread i's operand (the launch file holds these values)."""
    return ((i * 0x9E3779B1) ^ (i << 7) ^ 0x5A5A0000) & 0xFFFFFFFF


VALUES = tuple(f"{value(i):#x}" for i in range(THREADS))
PARTNER = 37


def _partner(th) -> int:
    return value((th.i + PARTNER) % THREADS)


def _count(predicate) -> int:
    return sum(1 for j in range(THREADS) if predicate(value(j) & 1))


_SETUP = f"""// %rd20: this thread's shared slot, %rd21: the partner's (tid + {PARTNER}) % 128
mov.u64 %rd20, sbuf;
mul.wide.u32 %rd1, %gt, 4;
add.s64 %rd21, %rd20, 0;
add.s64 %rd20, %rd20, %rd1;
add.u32 %r1, %gt, {PARTNER};
rem.u32 %r1, %r1, {THREADS};
mul.wide.u32 %rd1, %r1, 4;
add.s64 %rd21, %rd21, %rd1;
// %rd22: a 128-byte scratch line of this thread; %rd23: a cache policy
ld.param.u64 %rd22, [scratch];
mul.wide.u32 %rd1, %gt, 128;
add.s64 %rd22, %rd22, %rd1;
createpolicy.fractional.L2::evict_first.b64 %rd23, 1.0;"""

sync = Sweep("control", "gen_sync",
             "barrier and bar in every form, and the instructions with no result of their own "
             "between checked forms (PTX ISA 9.7.13, 9.7.19, 9.7.9.15-9.7.9.18).",
             [Operand("a", "u32", VALUES)], block=THREADS,
             locals=f".shared .align 4 .b8 sbuf[{4 * THREADS * 8}];\n"
                    ".local .align 16 .b8 lbuf[16];",
             setup=_SETUP,
             extra_params=((".param .u64 scratch", {"buffer": "scratch"}),),
             extra_buffers={"scratch": {"type": "u8", "count": 128 * THREADS}})

_BARRIERS = ("barrier.sync 0;", "barrier.sync.aligned 1;", "barrier.cta.sync 2, 128;",
             "barrier.cta.sync.aligned 3;", "bar.sync 4;", "bar.cta.sync 5, 128;",
             "bar.sync 6, 128;")
for _k, _barrier in enumerate(_BARRIERS):
    sync.forms.append(Form(
        "u32", f"st.shared.b32 [%rd20+{512 * _k}], %a32;\n{_barrier}\n"
               f"ld.shared.b32 {{d}}, [%rd21+{512 * _k}];", _partner,
        note=f"{_barrier} between a store and the partner's load"))
_ONES = _count(lambda bit: bit)
sync.forms += [
    Form("u32", "barrier.red.popc.u32 {d}, 7, %a_p;", lambda th: _ONES),
    Form("u32", "barrier.cta.red.popc.aligned.u32 {d}, 8, !%a_p;",
         lambda th: THREADS - _ONES),
    Form("pred", "barrier.red.and.pred {d}, 9, %a_p;", lambda th: int(_ONES == THREADS)),
    Form("pred", "barrier.cta.red.or.aligned.pred {d}, 10, !%a_p;",
         lambda th: int(_ONES < THREADS)),
    Form("pred", "barrier.red.and.pred {d}, 11, 1;", lambda th: 1),
    Form("u32", "bar.red.popc.u32 {d}, 12, %a_p;", lambda th: _ONES),
    Form("u32", "bar.cta.red.popc.u32 {d}, 15, !%a_p;", lambda th: THREADS - _ONES),
    Form("pred", "bar.cta.red.and.pred {d}, 13, !%a_p;", lambda th: int(_ONES == 0)),
    Form("pred", "bar.red.or.pred {d}, 14, %a_p;", lambda th: int(_ONES > 0)),
]
_QUIET = ("fence.sc.cta;", "fence.acq_rel.cluster;", "fence.sc.sys;", "fence.acq_rel.gpu;",
          "membar.cta;", "membar.sys;", "membar.gl;", "nanosleep.u32 20;",
          "nanosleep.u32 %a32;", "pmevent 1;", "pmevent.mask 0x3;", "griddepcontrol.wait;",
          "griddepcontrol.launch_dependents;", "setmaxnreg.dec.sync.aligned.u32 64;",
          "setmaxnreg.inc.sync.aligned.u32 128;", "brkpt;", "prefetch.global.L1 [%a_addr];",
          "prefetch.global.L2 [%a_addr];", "prefetch.local.L1 [lbuf];",
          "prefetch.local.L2 [lbuf];", "prefetch.L1 [%a_addr];",
          "prefetch.global.L2::evict_last [%a_addr];",
          "prefetch.global.L2::evict_normal [%a_addr];", "prefetch.tensormap [%rd22];",
          "prefetchu.L1 [%a_addr];", "applypriority.global.L2::evict_normal [%rd22], 128;",
          "applypriority.L2::evict_normal [%rd22], 128;", "discard.global.L2 [%rd22], 128;",
          "discard.L2 [%rd22], 128;")
for _k, _instruction in enumerate(_QUIET):
    sync.forms.append(Form("u32", f"{_instruction}\nxor.b32 {{d}}, %a32, {_k};",
                           lambda th, k=_k: th.a ^ k, note=f"runs {_instruction}"))
_POLICIES = ("createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 %rd1, 0.5;",
             "createpolicy.fractional.L2::evict_normal.b64 %rd1, 0.25;",
             "createpolicy.fractional.L2::evict_unchanged.L2::evict_first.b64 %rd1;",
             "createpolicy.range.L2::evict_last.L2::evict_first.b64 %rd1, [%a_addr], 128, 256;",
             "createpolicy.range.global.L2::evict_normal.L2::evict_unchanged.b64 %rd1, "
             "[%a_addr], 64, 128;")
for _policy in _POLICIES:
    sync.forms.append(Form("u32", f"{_policy}\nld.global.L2::cache_hint.b32 {{d}}, [%a_addr], "
                           "%rd1;", lambda th: th.a, note="a load with the policy"))
register(sync.split("gen_policy_global", lambda f: "createpolicy.range.global" in f.code,
                   "createpolicy.range with the optional .global state space (PTX ISA "
                   "9.7.9.18), used by a load whose value is checked."))
register(sync)

# -- generic addresses ------------------------------------------------------------------

_CONST = tuple(value(1000 + k) for k in range(THREADS))
spaces = Sweep("control", "gen_spaces",
               "cvta to and from every state space, and isspacep.shared::cta (PTX ISA 9.7.9.19, "
               "9.7.9.20).", [Operand("a", "u32", VALUES)], block=THREADS,
               decls=f".const .align 4 .u32 ctab[{THREADS}] = {{"
                     + ", ".join(str(v) for v in _CONST) + "};",
               locals=f".shared .align 4 .b8 sbuf[{4 * THREADS}];\n"
                      ".local .align 4 .b8 lbuf[4];",
               setup="mov.u64 %rd20, sbuf;\nmul.wide.u32 %rd1, %gt, 4;\n"
                     "add.s64 %rd20, %rd20, %rd1;\nst.shared.b32 [%rd20], %a32;\n"
                     "st.local.b32 [lbuf], %a32;\nmul.wide.u32 %rd21, %gi, 4;")
spaces.forms += [
    Form("u32", "cvta.shared::cta.u64 %rd1, %rd20;\nld.b32 {d}, [%rd1];", lambda th: th.a,
         note="a generic load through cvta.shared::cta reads the shared slot"),
    Form("u32", "cvta.shared.u64 %rd1, %rd20;\nld.b32 {d}, [%rd1];", lambda th: th.a),
    Form("u32", "cvta.local.u64 %rd1, lbuf;\nld.b32 {d}, [%rd1];", lambda th: th.a),
    Form("u32", "cvta.const.u64 %rd1, ctab;\nadd.s64 %rd1, %rd1, %rd21;\nld.b32 {d}, [%rd1];",
         lambda th: _CONST[th.i], note="a generic load through cvta.const reads ctab"),
    Form("u32", "cvta.global.u64 %rd1, %a_addr;\nld.b32 {d}, [%rd1];", lambda th: th.a),
    Form("u32", "cvta.shared::cta.u64 %rd1, %rd20;\ncvta.to.shared::cta.u64 %rd2, %rd1;\n"
                "ld.shared.b32 {d}, [%rd2];", lambda th: th.a,
         note="cvta.to.shared::cta undoes cvta.shared::cta"),
    Form("u32", "cvta.const.u64 %rd1, ctab;\ncvta.to.const.u64 %rd2, %rd1;\n"
                "add.s64 %rd2, %rd2, %rd21;\nld.const.b32 {d}, [%rd2];",
         lambda th: _CONST[th.i]),
    Form("pred", "cvta.shared::cta.u64 %rd1, %rd20;\nisspacep.shared::cta {d}, %rd1;",
         lambda th: 1),
    Form("pred", "isspacep.shared::cta {d}, %a_addr;", lambda th: 0),
]
register(spaces)

# -- calls and indirect branches --------------------------------------------------------

calls = Sweep("control", "gen_calls",
              "call.uni and ret.uni (PTX ISA 9.7.13.3, 9.7.13.5), brx.idx and brx.idx.uni "
              "over a .branchtargets list (9.7.13.2).", [Operand("a", "u32", VALUES)],
              block=THREADS,
              decls=".func (.param .b32 fret) twice(.param .b32 farg)\n{\n"
                    "    .reg .b32 %fx;\n    ld.param.b32 %fx, [farg];\n"
                    "    shl.b32 %fx, %fx, 1;\n    st.param.b32 [fret], %fx;\n    ret.uni;\n}")
calls.forms.append(Form(
    "u32", "{\n.param .b32 arg0;\n.param .b32 ret0;\nst.param.b32 [arg0], %a32;\n"
           "call.uni (ret0), twice, (arg0);\nld.param.b32 {d}, [ret0];\n}",
    lambda th: (th.a * 2) & 0xFFFFFFFF))
for _uni, _index, _name in ((True, "2", "U"), (False, "%r3", "D")):
    _labels = [f"{_name}{k}" for k in range(4)]
    _code = [f"mov.u32 %r3, {_index};" if _uni else "and.b32 %r3, %a32, 3;",
             f"{_name}T: .branchtargets {', '.join(_labels)};",
             f"brx.idx{'.uni' if _uni else ''} %r3, {_name}T;"]
    for _k, _label in enumerate(_labels):
        _code += [f"{_label}:", f"add.u32 {{d}}, %a32, {100 * (_k + 1)};", f"bra {_name}E;"]
    _code.append(f"{_name}E:")
    calls.forms.append(Form(
        "u32", "\n".join(_code),
        lambda th, uni=_uni: (th.a + 100 * ((2 if uni else th.a & 3) + 1)) & 0xFFFFFFFF))
register(calls)

expect_failure("control/trap", "trap")
