#!/usr/bin/env python3
"""Regenerate every artifact of the kernelcheck fixture corpus.

    python scripts/build_fixtures.py            # everything
    python scripts/build_fixtures.py --skip-triton --skip-numba
    python scripts/build_fixtures.py --only asserts   # the artifacts of one CUDA source

Inputs:  fixtures/src/*.cu, fixtures/src/host/vec_add_host.cu,
         fixtures/src/triton_kernels.py, fixtures/src/numba_kernels.py,
         fixtures/src/sass/*.cu (the SASS fixture set: kernels only the SASS tests read)
Outputs: fixtures/ptx/{sm_80,sm_90,nvrtc,nvrtc12,nvrtc12_G,O0G,triton,numba}/,
         fixtures/cubin/{sm_80,sm_90}/,
         fixtures/fatbin/, fixtures/exe/, fixtures/TOOLKIT.md (versions section),
         fixtures/sass/<arch>/<stem>.{cubin,ptx} for the architectures each SASS fixture
         source names on its first line (``// SASS-ARCHS: sm_80 sm_90a``).

PTX for sm_80/sm_90/O0G, the fatbins and the host executable come from the system nvcc;
NVRTC PTX and all cubins come from NVRTC (cuda.bindings.nvrtc); fixtures/ptx/nvrtc12 comes from
the CUDA 12.x NVRTC of the nvidia-cuda-nvrtc-cu12 wheel (through ctypes); the cubins are checked by
linking the NVRTC PTX with nvJitLink as well. Tests never run this script.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"
SRC = FIX / "src"
CUDA_HOME = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
NVCC = os.environ.get("NVCC", str(CUDA_HOME / "bin" / "nvcc"))
ARCHS = (80, 90)
O0G_STEMS = ("elementwise", "inplace", "atomics", "structs_calls", "misc")
FATBIN_STEM = "elementwise"
#: Stems to build (``--only``); empty means every source.
ONLY: set[str] = set()


def sources() -> list[Path]:
    return sorted(p for p in SRC.glob("*.cu") if not ONLY or p.stem in ONLY)


def sass_sources() -> list[Path]:
    """The sources of the SASS fixture set (fixtures/src/sass/)."""
    return sorted(p for p in (SRC / "sass").glob("*.cu") if not ONLY or p.stem in ONLY)


def sass_archs(src: Path) -> list[str]:
    """The architectures a SASS fixture source is built for (its ``SASS-ARCHS`` line)."""
    first = src.read_text().splitlines()[0]
    marker = "// SASS-ARCHS:"
    if not first.startswith(marker):
        raise RuntimeError(f"{src}: the first line must be '{marker} sm_XX ...'")
    return first[len(marker):].split()


def sass_artifacts() -> None:
    """The cubin (NVRTC, as for fixtures/cubin) and the PTX of every SASS fixture source, per
    architecture: fixtures/sass/<arch>/<stem>.cubin and .ptx (``sm_90a`` and the other
    architecture-specific targets included)."""
    for src in sass_sources():
        for arch in sass_archs(src):
            out = FIX / "sass" / arch
            out.mkdir(parents=True, exist_ok=True)
            _, cubin = nvrtc_compile(src, [f"--gpu-architecture={arch}", *NVRTC_COMMON])
            (out / f"{src.stem}.cubin").write_bytes(cubin)
            ptx, _ = nvrtc_compile(src, [f"--gpu-architecture=compute_{arch[3:]}",
                                         *NVRTC_COMMON])
            (out / f"{src.stem}.ptx").write_bytes(ptx)
            print(f"nvrtc sass {arch}", src.stem, flush=True)


def o0g_stems() -> list[str]:
    return [stem for stem in O0G_STEMS if not ONLY or stem in ONLY]


def run(cmd: list[str], **kw) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, **kw)


def nvcc_ptx() -> None:
    for arch in ARCHS:
        out = FIX / "ptx" / f"sm_{arch}"
        out.mkdir(parents=True, exist_ok=True)
        for src in sources():
            run([NVCC, "-ptx", f"-arch=sm_{arch}", "-O3", "-lineinfo", src.name,
                 "-o", out / f"{src.stem}.ptx"], cwd=SRC)
    out = FIX / "ptx" / "O0G"
    out.mkdir(parents=True, exist_ok=True)
    for stem in o0g_stems():
        run([NVCC, "-ptx", "-arch=sm_80", "-O0", "-G", f"{stem}.cu", "-o", out / f"{stem}.ptx"],
            cwd=SRC)


def _check(res, what: str) -> None:
    err = res[0]
    if int(err) != 0:
        raise RuntimeError(f"{what} failed: {err!r}")


def nvrtc_compile(src: Path, opts: list[str]) -> tuple[bytes, bytes]:
    """Return (ptx, cubin-or-empty) compiled by NVRTC with the given options."""
    from cuda.bindings import nvrtc

    text = src.read_bytes()
    err, prog = nvrtc.nvrtcCreateProgram(text, src.name.encode(), 0, [], [])
    _check((err,), "nvrtcCreateProgram")
    bopts = [o.encode() for o in opts]
    (err,) = nvrtc.nvrtcCompileProgram(prog, len(bopts), bopts)
    err_l, log_size = nvrtc.nvrtcGetProgramLogSize(prog)
    log = b" " * log_size
    nvrtc.nvrtcGetProgramLog(prog, log)
    if int(err) != 0:
        raise RuntimeError(f"NVRTC failed for {src.name} {opts}:\n{log.decode(errors='replace')}")
    ptx = b""
    if any(o.startswith("--gpu-architecture=compute_") for o in opts):
        _, size = nvrtc.nvrtcGetPTXSize(prog)
        ptx = b" " * size
        _check(nvrtc.nvrtcGetPTX(prog, ptx), "nvrtcGetPTX")
        ptx = ptx.rstrip(b"\x00")
    cubin = b""
    if any(o.startswith("--gpu-architecture=sm_") for o in opts):
        _, size = nvrtc.nvrtcGetCUBINSize(prog)
        cubin = b" " * size
        _check(nvrtc.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")
    nvrtc.nvrtcDestroyProgram(prog)
    return ptx, cubin


NVRTC_COMMON = ["-lineinfo", "-std=c++17", f"--include-path={CUDA_HOME / 'include'}"]


def nvrtc_artifacts() -> None:
    out_ptx = FIX / "ptx" / "nvrtc"
    out_ptx.mkdir(parents=True, exist_ok=True)
    for src in sources():
        ptx, _ = nvrtc_compile(src, ["--gpu-architecture=compute_90", *NVRTC_COMMON])
        (out_ptx / f"{src.stem}.ptx").write_bytes(ptx)
        print("nvrtc ptx", src.stem, flush=True)
    for arch in ARCHS:
        out = FIX / "cubin" / f"sm_{arch}"
        out.mkdir(parents=True, exist_ok=True)
        for src in sources():
            _, cubin = nvrtc_compile(src, [f"--gpu-architecture=sm_{arch}", *NVRTC_COMMON])
            (out / f"{src.stem}.cubin").write_bytes(cubin)
            print(f"nvrtc cubin sm_{arch}", src.stem, flush=True)


def _nvrtc12_library() -> Path:
    """libnvrtc.so.12 from the nvidia-cuda-nvrtc-cu12 wheel (downloaded, never installed)."""
    import glob
    import tempfile
    import zipfile

    where = Path(tempfile.gettempdir()) / "kernelcheck-nvrtc12"
    found = glob.glob(str(where / "**/libnvrtc.so.12*"), recursive=True)
    if not found:
        run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", where,
             "nvidia-cuda-nvrtc-cu12"])
        for wheel in where.glob("*.whl"):
            zipfile.ZipFile(wheel).extractall(where)
        found = glob.glob(str(where / "**/libnvrtc.so.12*"), recursive=True)
    return Path(sorted(found)[0])


def nvrtc12_ptx() -> None:
    """PTX from the CUDA 12.x NVRTC (PTX ISA 8.x), through ctypes: cuda-bindings 13 binds
    only the 13.x library. ``ptx/nvrtc12`` at -O3 with line info for every source, and
    ``ptx/nvrtc12_G`` with device debug information (-G) for the O0G subset."""
    _nvrtc12_variant("nvrtc12", sources(), [b"-lineinfo"])
    _nvrtc12_variant("nvrtc12_G", [SRC / f"{stem}.cu" for stem in o0g_stems()],
                     [b"--device-debug"])


def _nvrtc12_variant(name: str, srcs: list[Path], extra: list[bytes]) -> None:
    import ctypes

    lib = ctypes.CDLL(str(_nvrtc12_library()))
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    out = FIX / "ptx" / name
    out.mkdir(parents=True, exist_ok=True)
    for src in srcs:
        prog = ctypes.c_void_p()
        status = lib.nvrtcCreateProgram(ctypes.byref(prog), src.read_bytes(),
                                        src.name.encode(), 0, None, None)
        if status:
            raise RuntimeError(f"nvrtcCreateProgram({src.name}) failed: {status}")
        options = [b"--gpu-architecture=compute_80", *extra, b"-std=c++17",
                   b"--include-path=" + str(CUDA_HOME / "include").encode()]
        array = (ctypes.c_char_p * len(options))(*options)
        status = lib.nvrtcCompileProgram(prog, len(options), array)
        if status:
            size = ctypes.c_size_t()
            lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
            log = ctypes.create_string_buffer(size.value)
            lib.nvrtcGetProgramLog(prog, log)
            raise RuntimeError(f"NVRTC 12 failed on {src.name}:\n{log.value.decode()}")
        size = ctypes.c_size_t()
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        ptx = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetPTX(prog, ptx)
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
        (out / f"{src.stem}.ptx").write_bytes(ptx.value)
        print(f"nvrtc {major.value}.{minor.value} {name}", src.stem, flush=True)


def nvjitlink_check() -> None:
    """Link every committed sm_80/sm_90 nvcc PTX with nvJitLink (a consistency check)."""
    from cuda.bindings import nvjitlink

    for arch in ARCHS:
        for src in sources():
            ptx = (FIX / "ptx" / f"sm_{arch}" / f"{src.stem}.ptx").read_bytes()
            h = nvjitlink.create(2, [f"-arch=sm_{arch}".encode(), b"-lineinfo"])
            nvjitlink.add_data(h, nvjitlink.InputType.PTX, ptx, len(ptx), src.stem)
            nvjitlink.complete(h)
            size = nvjitlink.get_linked_cubin_size(h)
            buf = bytearray(size)
            nvjitlink.get_linked_cubin(h, buf)
            nvjitlink.destroy(h)
            assert buf[:4] == b"\x7fELF", src
    print("nvJitLink linked all sm_80/sm_90 PTX", flush=True)


def fatbins_and_exe() -> None:
    out = FIX / "fatbin"
    out.mkdir(parents=True, exist_ok=True)
    gencode = ["-gencode", "arch=compute_80,code=sm_80",
               "-gencode", "arch=compute_90,code=sm_90",
               "-gencode", "arch=compute_90,code=compute_90"]
    run([NVCC, "-fatbin", "-O3", *gencode, f"{FATBIN_STEM}.cu",
         "-o", out / f"{FATBIN_STEM}.fatbin"], cwd=SRC)
    # Every entry compressed. fatbinary 13.0: -compress-mode=speed gives LZ4 entries (flag 0x2000,
    # as in the PyTorch CUDA wheels); -compress-mode=size gives zstd entries (flag 0x8000).
    for suffix, mode in (("compressed", "speed"), ("compressed_zstd", "size")):
        run([NVCC, "-fatbin", "-O3", *gencode, "-Xfatbin", "-compress-all", "-Xfatbin",
             f"-compress-mode={mode}", f"{FATBIN_STEM}.cu",
             "-o", out / f"{FATBIN_STEM}_{suffix}.fatbin"], cwd=SRC)
    exe = FIX / "exe"
    exe.mkdir(parents=True, exist_ok=True)
    run([NVCC, "-O2", *gencode, "host/vec_add_host.cu", "-o", exe / "vec_add_host"], cwd=SRC)


def triton_ptx() -> None:
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    sys.path.insert(0, str(SRC))
    import triton_kernels  # noqa: E402

    triton_kernels.build(FIX / "ptx" / "triton")


def numba_ptx() -> None:
    os.environ.setdefault("CUDA_HOME", str(CUDA_HOME))
    sys.path.insert(0, str(SRC))
    import numba_kernels  # noqa: E402

    numba_kernels.build(FIX / "ptx" / "numba")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-nvcc", action="store_true")
    ap.add_argument("--skip-nvrtc", action="store_true")
    ap.add_argument("--skip-triton", action="store_true")
    ap.add_argument("--skip-numba", action="store_true")
    ap.add_argument("--only", action="append", default=[], metavar="STEM",
                    help="build only the PTX and cubins of fixtures/src/STEM.cu or "
                         "fixtures/src/sass/STEM.cu (repeatable); no fatbin, executable, "
                         "Triton or numba artifact")
    args = ap.parse_args()
    if args.only:
        missing = [s for s in args.only if not (SRC / f"{s}.cu").is_file()
                   and not (SRC / "sass" / f"{s}.cu").is_file()]
        if missing:
            ap.error(f"no fixtures/src/{missing[0]}.cu or fixtures/src/sass/{missing[0]}.cu")
        ONLY.update(args.only)
        args.skip_triton = args.skip_numba = True
    if not args.skip_nvcc:
        nvcc_ptx()
        if not ONLY:
            fatbins_and_exe()
    if not args.skip_nvrtc:
        if sources():
            nvrtc_artifacts()
            nvjitlink_check()
            nvrtc12_ptx()
        sass_artifacts()
    if not args.skip_triton:
        triton_ptx()
    if not args.skip_numba:
        numba_ptx()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
