"""SAXPY written with cuda.core: compile with NVRTC (``Program``), launch, read back.

``y = a*x + y`` in place (not idempotent), then ``z = a*x + y`` into a fresh buffer
(idempotent). Needs ``pip install 'kernelcheck[core]'``. Run it with
``kernelcheck run -- python -m kernelcheck.demos.core_saxpy``.
"""

from __future__ import annotations

import sys

import numpy as np

SOURCE = r"""
extern "C" __global__ void saxpy(float a, const float *x, const float *y, float *out,
                                 size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a * x[i] + y[i];
}
"""


def main() -> int:
    """Compile, run both launches and check the results; returns the exit status."""
    from cuda.core import (
        Device,
        LaunchConfig,
        LegacyPinnedMemoryResource,
        Program,
        ProgramOptions,
        launch,
    )

    device = Device()
    device.set_current()
    stream = device.create_stream()
    program = Program(SOURCE, code_type="c++",
                      options=ProgramOptions(arch=f"sm_{device.arch}"))
    saxpy = program.compile("ptx").get_kernel("saxpy")
    n = 384
    pinned = LegacyPinnedMemoryResource()
    host_x, host_y, host_z = (pinned.allocate(4 * n) for _ in range(3))
    x = np.from_dlpack(host_x).view(np.float32)
    y = np.from_dlpack(host_y).view(np.float32)
    z = np.from_dlpack(host_z).view(np.float32)
    x[:] = np.arange(n)
    y[:] = 1.0
    dx, dy, dz = (device.allocate(4 * n, stream=stream) for _ in range(3))
    dx.copy_from(host_x, stream=stream)
    dy.copy_from(host_y, stream=stream)
    config = LaunchConfig(grid=(n + 127) // 128, block=128)
    launch(stream, config, saxpy, np.float32(2.0), dx, dy, dy, np.uint64(n))  # in place
    launch(stream, config, saxpy, np.float32(2.0), dx, dy, dz, np.uint64(n))
    host_y.copy_from(dy, stream=stream)
    host_z.copy_from(dz, stream=stream)
    stream.sync()
    expected_y = 2 * np.arange(n, dtype=np.float32) + 1
    if not (np.array_equal(y, expected_y) and np.array_equal(z, 2 * x + expected_y)):
        print("core_saxpy: wrong results", file=sys.stderr)
        return 1
    print(f"core_saxpy: {n} elements, both launches correct")
    return 0


if __name__ == "__main__":
    sys.exit(main())
