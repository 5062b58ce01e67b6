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
    "video/video_select": "the PTX front end rejects operand byte/half selectors (%r.b0, "
                          "%r.h1), and the video instructions are not supported",
    # -- registers
} block does not hide the outer "
                           "register of the same name: the two are merged",
    "registers/bare_names": "register names without '%' are read as symbols (not a valid "
                            "destination) and rejected in a predicate pair (d|p)",
    "registers/declaration_lists": "a .reg list mixing a parameterized name (%r<4>) with plain "
                                   "names declares only the parameterized ones (undeclared "
                                   "register %x)",
    "registers/vectors": "the PTX front end rejects vector-register components (%v.x)",
    "registers/warp_size": "the constant WARP_SZ is not supported",
}
