#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# aarch64: samc cross-built with Debian's aarch64 cross compiler against the
# arm64 libraries (multiarch, scripts/install_deps.sh --cross), its tests run
# under qemu-aarch64 (user mode): the NEON kernels and the BFDOT bf16 kernel
# (qemu's default CPU has FEAT_BF16) at the layer level on every committed
# fixture (fast, chained and isolated; bf16 isolated), the kernel tests, the
# API and abort tests; without BF16 (QEMU_CPU=cortex-a72) the kernel tests
# once more. qemu is ~20x slower than the machine: the slow suites (the op
# table, the scalar reference's parity, the CLI scripts) are left to the
# native runs, which test the same C.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD_AARCH64:-build-aarch64}
mkdir -p "$B/hdf5"
# HDF5's headers for the target (the arm64 -dev package cannot be installed
# beside the build machine's): unpacked from the package file, not installed
if [ ! -f "$B/hdf5/usr/include/hdf5/serial/hdf5.h" ]; then
  (cd "$B/hdf5" && apt-get download -qq libhdf5-dev:arm64 && dpkg-deb -x libhdf5-dev_*_arm64.deb .)
fi
cmake -S . -B "$B" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release -DSAMC_WERROR=ON \
  -DSAMC_HDF5_INCLUDE_DIR="$PWD/$B/hdf5/usr/include/hdf5/serial" \
  -DSAMC_HDF5_LIBRARY=/usr/lib/aarch64-linux-gnu/libhdf5_serial.so.103 >/dev/null
cmake --build "$B" -j"$(nproc)"
qemu-aarch64 "$B/samc" --version | grep -q "kernels neon, bf16 neon_bf16" ||
  { echo "the aarch64 build does not run NEON and BFDOT under qemu"; exit 1; }
UNIT='^(test_isa|test_gemm_kernels|test_attention_kernels|test_fast_kernels|test_resize|test_layout|test_abort|test_api|test_video_api|test_sam3_api|abi)$'
ctest --test-dir "$B" --output-on-failure -j"$(nproc)" -R "$UNIT|^parity_fast_|^parity_bf16_isolated_"
QEMU_CPU=cortex-a72 ctest --test-dir "$B" --output-on-failure -j"$(nproc)" -R '^(test_isa|test_gemm_kernels)$'
