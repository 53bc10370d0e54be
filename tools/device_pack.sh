# SPDX-License-Identifier: Apache-2.0
# device_pack.sh - what the scripts that run samc on another machine
# (tools/bench_device.sh, tools/cuda_device.sh) share when they pack:
# sourced, not run.

# bundle_programs STAGE PROGRAM...: each program into STAGE/bin with every
# shared library it loads (and the dynamic loader) into STAGE/lib, so that
# the target's glibc does not matter.
bundle_programs() {
    local stage=$1 b
    shift
    mkdir -p "$stage/bin" "$stage/lib"
    for b in "$@"; do
        cp "$b" "$stage/bin/"
        ldd "$b" | awk '/=> \//{print $3} /ld-linux/{print $1}' | xargs -r -I{} cp -Ln {} "$stage/lib/"
    done
}

# pack_sources DIR: the official sam2 package ($SAM2_SRC: the repository or
# its sam2/ folder) as DIR/sam2src.tar.xz, its commit and samc's.
pack_sources() {
    local dir=$1 root=$SAM2_SRC here
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    [ -d "$root/sam2/modeling" ] || root=$(dirname "$SAM2_SRC")
    tar -C "$root" -cJf "$dir/sam2src.tar.xz" --exclude='*.pyc' --exclude='*.so' sam2
    (cd "$root" && git rev-parse HEAD 2>/dev/null || echo "${SAM2_COMMIT:?no .git: give SAM2_COMMIT}") \
        >"$dir/SAM2_COMMIT"
    git -C "$here" rev-parse --short HEAD >"$dir/SAMC_COMMIT"
}

# samc_link_flags BUILD: what a program linking BUILD/libsamc.a needs after
# it, as that build configured it (Libs.private of BUILD/samc.pc: without
# FFmpeg's libraries in a -DSAMC_WITH_FFMPEG=OFF build).
samc_link_flags() {
    sed -n 's/^Libs.private: *//p' "$1/samc.pc"
}

# The packs build without FFmpeg: its codecs pull in ~50 shared libraries
# (60 MB of bundle), and what travels to the lent machine is limited to
# 64 MiB with the fixtures. Video files are not part of any device run.
SAMC_PACK_CMAKE_FLAGS=(-DSAMC_WITH_FFMPEG=OFF -DSAMC_BUILD_TESTS=ON)
