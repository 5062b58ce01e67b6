"""The limits of call inlining, shared by the PTX analysis and the SASS lifter.

Both front ends analyse a call by inlining the callee's body at the call site: PTX
``call`` of a ``.func`` with a body (:mod:`kernelcheck.analysis.symbolic`) and SASS
``CALL.REL``/``CALL.ABS`` of a subroutine (:mod:`kernelcheck.sass.inline`). The same two
limits bound both, so that a kernel is not proven for the same reason whichever form it
is analysed in: the nesting depth of inlined calls and the number of instructions inlined
into one kernel. A recursive call (a callee already on the chain of calls that reached
it) is never inlined; neither is an indirect call (its callee is not known).
"""

from __future__ import annotations

__all__ = ["MAX_CALL_DEPTH", "MAX_INLINED_INSTRUCTIONS", "depth_reason", "size_reason",
           "recursion_reason"]

#: Calls nested deeper than this are not inlined: the kernel is not proven.
MAX_CALL_DEPTH = 8
#: Instructions that may be inlined into one kernel, all call sites together; past it the
#: remaining calls are not inlined and the kernel is not proven.
MAX_INLINED_INSTRUCTIONS = 20_000


def depth_reason() -> str:
    """The reason given when a call is nested deeper than :data:`MAX_CALL_DEPTH`."""
    return f"call depth over {MAX_CALL_DEPTH}"


def size_reason() -> str:
    """The reason given when inlining would pass :data:`MAX_INLINED_INSTRUCTIONS`."""
    return f"inlined code over {MAX_INLINED_INSTRUCTIONS} instructions"


def recursion_reason(callee: str) -> str:
    """The reason given for a call of a function already being inlined."""
    return f"recursive call of {callee}"
