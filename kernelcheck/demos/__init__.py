"""Small CUDA programs to try ``kernelcheck run`` on, with or without a GPU.

Each is a module to run with ``python -m``; on a machine without a GPU, ``kernelcheck run``
runs them on the stand-in driver (the CPU emulator)::

    kernelcheck run -- python -m kernelcheck.demos.vector_add    # cuda.bindings, bundled PTX
    kernelcheck run -- python -m kernelcheck.demos.nvrtc_saxpy   # cuda.bindings + NVRTC
    kernelcheck run -- python -m kernelcheck.demos.core_saxpy    # cuda.core + NVRTC

The NVRTC ones need ``pip install 'kernelcheck[core]'`` (cuda-core, nvidia-cuda-nvrtc,
nvidia-nvjitlink). Each checks its results and exits 0 when they are right.
"""
