"""Tables of the ``.nv.info`` attribute ids (EIATTR_*) and record formats (EIFMT_*).

A cubin's ``.nv.info`` and ``.nv.info.<kernel>`` sections are lists of attribute records, and
``.nv.compat`` uses the same record layout with its own ids (EICOMPAT_ATTR_*). NVIDIA does not
publish the numbering; these tables are the names ``cuobjdump -elf`` prints for each id.

Regeneration recipe (CUDA 13.0 ``nvcc``, ``cuobjdump`` 13.5.37 from the nvidia-cuda-cuobjdump
wheel): compile any kernel to a cubin, overwrite the payload of its ``.nv.info*`` sections
with four-byte ``EIFMT_NVAL`` records ``01 <id> 00 00`` for ids 0..255, run
``cuobjdump -elf`` and read the ``Attribute:`` lines back in order. Ids that cuobjdump 13.5
prints as "unknown Attribute" but that older tools (CuAssembler's ``CuNVInfo.py``) name are
marked below; every other id it does not name is reported by number
(:func:`eiattr_name` returns ``EIATTR_UNKNOWN_0x..``).
"""

from __future__ import annotations

__all__ = [
    "EIFMT_NVAL",
    "EIFMT_BVAL",
    "EIFMT_HVAL",
    "EIFMT_SVAL",
    "EIFMT_NAMES",
    "EIATTR",
    "EIATTR_NAMES",
    "EICOMPAT_NAMES",
    "eiattr_name",
    "eicompat_name",
]

#: Record formats: no value, a byte, a half word, a sized payload.
EIFMT_NVAL = 0x01
EIFMT_BVAL = 0x02
EIFMT_HVAL = 0x03
EIFMT_SVAL = 0x04

EIFMT_NAMES: dict[int, str] = {
    EIFMT_NVAL: "EIFMT_NVAL",
    EIFMT_BVAL: "EIFMT_BVAL",
    EIFMT_HVAL: "EIFMT_HVAL",
    EIFMT_SVAL: "EIFMT_SVAL",
}

#: Attribute id -> name, as printed by ``cuobjdump -elf`` 13.5.37.
EIATTR_NAMES: dict[int, str] = {
    0x00: "EIATTR_ERROR",
    0x01: "EIATTR_PAD",
    0x02: "EIATTR_IMAGE_SLOT",
    0x03: "EIATTR_JUMPTABLE_RELOCS",
    0x04: "EIATTR_CTAIDZ_USED",
    0x05: "EIATTR_MAX_THREADS",
    0x06: "EIATTR_IMAGE_OFFSET",
    0x07: "EIATTR_IMAGE_SIZE",
    0x08: "EIATTR_TEXTURE_NORMALIZED",
    0x09: "EIATTR_SAMPLER_INIT",
    0x0A: "EIATTR_PARAM_CBANK",
    0x0B: "EIATTR_SMEM_PARAM_OFFSETS",
    0x0C: "EIATTR_CBANK_PARAM_OFFSETS",
    0x0D: "EIATTR_SYNC_STACK",
    0x0E: "EIATTR_TEXID_SAMPID_MAP",
    0x0F: "EIATTR_EXTERNS",
    0x10: "EIATTR_REQNTID",
    0x11: "EIATTR_FRAME_SIZE",
    0x12: "EIATTR_MIN_STACK_SIZE",
    0x13: "EIATTR_SAMPLER_FORCE_UNNORMALIZED",
    0x14: "EIATTR_BINDLESS_IMAGE_OFFSETS",
    0x15: "EIATTR_BINDLESS_TEXTURE_BANK",
    0x16: "EIATTR_BINDLESS_SURFACE_BANK",
    0x17: "EIATTR_KPARAM_INFO",
    0x18: "EIATTR_SMEM_PARAM_SIZE",
    0x19: "EIATTR_CBANK_PARAM_SIZE",
    0x1A: "EIATTR_QUERY_NUMATTRIB",
    0x1B: "EIATTR_MAXREG_COUNT",
    0x1C: "EIATTR_EXIT_INSTR_OFFSETS",
    0x1D: "EIATTR_S2RCTAID_INSTR_OFFSETS",
    0x1E: "EIATTR_CRS_STACK_SIZE",
    0x1F: "EIATTR_NEED_CNP_WRAPPER",
    0x20: "EIATTR_NEED_CNP_PATCH",
    0x21: "EIATTR_EXPLICIT_CACHING",
    0x22: "EIATTR_ISTYPEP_USED",
    0x23: "EIATTR_MAX_STACK_SIZE",
    0x24: "EIATTR_SUQ_USED",
    0x25: "EIATTR_LD_CACHEMOD_INSTR_OFFSETS",
    0x26: "EIATTR_LOAD_CACHE_REQUEST",
    0x27: "EIATTR_ATOM_SYS_INSTR_OFFSETS",
    0x28: "EIATTR_COOP_GROUP_INSTR_OFFSETS",
    0x29: "EIATTR_COOP_GROUP_MASK_REGIDS",
    0x2A: "EIATTR_SW1850030_WAR",  # CuAssembler's name; cuobjdump 13.5 does not name it
    0x2B: "EIATTR_WMMA_USED",
    0x2C: "EIATTR_HAS_PRE_V10_OBJECT",
    0x2D: "EIATTR_ATOMF16_EMUL_INSTR_OFFSETS",
    0x2E: "EIATTR_ATOM16_EMUL_INSTR_REG_MAP",
    0x2F: "EIATTR_REGCOUNT",
    0x30: "EIATTR_SW2393858_WAR",  # CuAssembler's name; cuobjdump 13.5 does not name it
    0x31: "EIATTR_INT_WARP_WIDE_INSTR_OFFSETS",
    0x32: "EIATTR_SHARED_SCRATCH",
    0x33: "EIATTR_STATISTICS",
    0x34: "EIATTR_INDIRECT_BRANCH_TARGETS",
    0x35: "EIATTR_SW2861232_WAR",  # CuAssembler's name; cuobjdump 13.5 does not name it
    0x36: "EIATTR_SW_WAR",
    0x37: "EIATTR_CUDA_API_VERSION",
    0x38: "EIATTR_NUM_MBARRIERS",
    0x39: "EIATTR_MBARRIER_INSTR_OFFSETS",
    0x3A: "EIATTR_COROUTINE_RESUME_ID_OFFSETS",
    0x3B: "EIATTR_SAM_REGION_STACK_SIZE",
    0x3C: "EIATTR_PER_REG_TARGET_PERF_STATS",
    0x3D: "EIATTR_CTA_PER_CLUSTER",
    0x3E: "EIATTR_EXPLICIT_CLUSTER",
    0x3F: "EIATTR_MAX_CLUSTER_RANK",
    0x40: "EIATTR_INSTR_REG_MAP",
    0x41: "EIATTR_RESERVED_SMEM_USED",
    0x42: "EIATTR_RESERVED_SMEM_0_SIZE",
    0x43: "EIATTR_UCODE_SECTION_DATA",
    0x44: "EIATTR_UNUSED_LOAD_BYTE_OFFSET",
    0x45: "EIATTR_KPARAM_INFO_V2",
    0x46: "EIATTR_SYSCALL_OFFSETS",
    0x47: "EIATTR_SW_WAR_MEMBAR_SYS_INSTR_OFFSETS",  # CuAssembler's name
    0x48: "EIATTR_GRAPHICS_GLOBAL_CBANK",
    0x49: "EIATTR_SHADER_TYPE",
    0x4A: "EIATTR_VRC_CTA_INIT_COUNT",
    0x4B: "EIATTR_TOOLS_PATCH_FUNC",
    0x4C: "EIATTR_NUM_BARRIERS",
    0x4D: "EIATTR_TEXMODE_INDEPENDENT",
    0x4E: "EIATTR_PERF_STATISTICS",
    0x4F: "EIATTR_AT_ENTRY_FRAGMENTS",
    0x50: "EIATTR_SPARSE_MMA_MASK",
    0x51: "EIATTR_TCGEN05_1CTA_USED",
    0x52: "EIATTR_TCGEN05_2CTA_USED",
    0x53: "EIATTR_GEN_ERRBAR_AT_EXIT",
    0x54: "EIATTR_REG_RECONFIG",
    0x55: "EIATTR_ANNOTATIONS",
    0x57: "EIATTR_STACK_CANARY_TRAP_OFFSETS",
    0x58: "EIATTR_STUB_FUNCTION_KIND",
    0x59: "EIATTR_LOCAL_CTA_ASYNC_STORE_OFFSETS",
    0x5B: "EIATTR_BLOCKS_ARE_CLUSTERS",
    0x5C: "EIATTR_SANITIZE",
    0x5D: "EIATTR_SYSCALLS_FALLBACK",
    0x5E: "EIATTR_CUDA_REQ",
    0x61: "EIATTR_RTCORE_ENTRY",
    0x62: "EIATTR_CLUSTER_LAUNCH_CONTROL_USED",
    0x64: "EIATTR_MIN_PER_CTA_MEMORY_SIZE",
    0x65: "EIATTR_IGNOREOOB_CP_ASYNC_BULK_INSTR_OFFSETS",
    0x66: "EIATTR_LANGUAGE",
    0x68: "EIATTR_GRID_ATTRIBUTES",
    0x69: "EIATTR_STACK_OFFSET",
    0x6A: "EIATTR_RT_LIVESTATE_SASS_MAP",
    0x6B: "EIATTR_NVSAL_SW_WAR",
    0x6C: "EIATTR_INSTR_OFFSETS",
    0x6D: "EIATTR_PREEXIT_USED",
}

#: Name -> id, for code that wants ``EIATTR["EIATTR_KPARAM_INFO"]``.
EIATTR: dict[str, int] = {name: number for number, name in EIATTR_NAMES.items()}

#: ``.nv.compat`` attribute id -> name, as printed by ``cuobjdump -elf`` 13.5.37 (ids 7 and 8
#: are unnamed there).
EICOMPAT_NAMES: dict[int, str] = {
    0x01: "EICOMPAT_ATTR_PAD",
    0x02: "EICOMPAT_ATTR_ISA_CLASS",
    0x03: "EICOMPAT_ATTR_INST_TENSORMAP_V1",
    0x04: "EICOMPAT_ATTR_INST_TCGEN05_MMA_DEPRECATED",
    0x05: "EICOMPAT_ATTR_INST_TCGEN05_MMA",
    0x06: "EICOMPAT_ATTR_ENABLE_OPPORTUNISTIC_FINALIZATION",
    0x09: "EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET",
}


def eiattr_name(attribute: int) -> str:
    """The EIATTR name of an attribute id, or ``EIATTR_UNKNOWN_0x..`` when it has none.

    Examples
    --------
    >>> eiattr_name(0x17), eiattr_name(0xF0)
    ('EIATTR_KPARAM_INFO', 'EIATTR_UNKNOWN_0xf0')
    """
    return EIATTR_NAMES.get(attribute, f"EIATTR_UNKNOWN_0x{attribute:02x}")


def eicompat_name(attribute: int) -> str:
    """The EICOMPAT_ATTR name of a ``.nv.compat`` attribute id, or ``EICOMPAT_ATTR_UNKNOWN_0x..``.

    Examples
    --------
    >>> eicompat_name(9)
    'EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET'
    """
    return EICOMPAT_NAMES.get(attribute, f"EICOMPAT_ATTR_UNKNOWN_0x{attribute:02x}")
