"""The Python half of kernelcheck's stand-in CUDA driver (``libcuda.so.1`` for CPU machines).

The C library (``kernelcheck/shim/standin/*.c``, built by :mod:`kernelcheck.shim.build`)
implements the driver entry points a cuda-python program uses and forwards memory, module and
launch operations to :mod:`kernelcheck.standin.driver`, which runs them on the CPU emulator
(:mod:`kernelcheck.emu`). :func:`standin_library_dir` gives a directory holding
``libcuda.so.1`` to put first on ``LD_LIBRARY_PATH``.
"""

from kernelcheck.standin.environment import standin_environment, standin_library_dir

__all__ = ["standin_library_dir", "standin_environment"]
