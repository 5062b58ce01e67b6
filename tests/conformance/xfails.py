"""Cases the emulator does not pass yet, each with what is missing or wrong.

Every entry is an ``xfail(strict=True)``: when the emulator gains the instruction or the fix,
the case passes, pytest reports XPASS(strict) as a failure, and the entry must go.
"""

XFAILS: dict[str, str] = {
    # -- integer
    # -- bits
    # -- compare
    # -- float
    # -- convert
    # -- memory
    # -- matrix
    # -- atomics
    # -- warp
    # -- video
    "video/video_select": "byte and half-word operand selectors (%r.b0, %r.h1) are "
                          "refused as unsupported at their line and column",
    # -- registers
}
