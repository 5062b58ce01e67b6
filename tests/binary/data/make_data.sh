#!/usr/bin/env bash
# Regenerates the test binaries of tests/binary from the .cu sources beside this script.
# Needs nvcc (CUDA 13.0 made the committed files). Run from any directory:
#   bash tests/binary/data/make_data.sh
set -euo pipefail
cd "$(dirname "$0")"
NVCC=${NVCC:-nvcc}
GENCODE=(-gencode arch=compute_80,code=sm_80 -gencode "arch=compute_90,code=[sm_90,compute_90]")

# Stand-alone cubins, one per architecture (parameter base 0x160 on sm_80, 0x210 on sm_90).
"$NVCC" -cubin -arch=sm_80 -o k80.cubin kernels.cu
"$NVCC" -cubin -arch=sm_90 -o k90.cubin kernels.cu
"$NVCC" -ptx -arch=sm_80 -o k80.ptx kernels.cu

# Fatbins: uncompressed, LZ4 (--compress-mode=speed) and zstd (--compress-mode=size).
"$NVCC" -fatbin "${GENCODE[@]}" -Xfatbin -compress=false -o plain.fatbin kernels.cu
"$NVCC" -fatbin "${GENCODE[@]}" -Xfatbin -compress-all --compress-mode=speed -o lz4.fatbin kernels.cu
"$NVCC" -fatbin "${GENCODE[@]}" -Xfatbin -compress-all --compress-mode=size -o zstd.fatbin kernels.cu

# A host executable with two translation units (two fatbins in .nv_fatbin) and a
# relocatable-device-code object (its fatbin sits in __nv_relfatbin).
"$NVCC" -cudart shared "${GENCODE[@]}" -o host.exe host.cu kernels.cu
"$NVCC" -c -rdc=true -arch=sm_80 -o rdc.o kernels.cu
strip host.exe
"$NVCC" --version | tail -2 > TOOLKIT_VERSION
