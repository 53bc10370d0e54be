# SPDX-License-Identifier: Apache-2.0
# Cross build for aarch64 with Debian's cross compiler and multiarch
# libraries (CI: .ci/aarch64.sh):
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake ...
# The tests run under qemu-aarch64 (CMAKE_CROSSCOMPILING_EMULATOR): the
# target's libraries are found where multiarch installs them, the dynamic
# loader in /lib (libc6:arm64).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
# pkg-config: the target's .pc files only
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
