#!/usr/bin/env bash
# Build the manet-mutex ns-3 scenario program against the PyPI `ns3` wheel (no ns-3 source
# build): finds or downloads the wheel into a cache directory, builds the static library of
# crates/ffi with cargo, compiles ns3/*.cc with g++ -std=c++20 (ns-3.44 headers need C++20).
#
#   ns3/build.sh              # -> $NS3_BUILD_DIR/manet-mutex-sim (default target/ns3/)
#
# Environment:
#   CARGO_TARGET_DIR  cargo's target directory (default <repo>/target)
#   NS3_WHEEL_DIR     where the wheel is cached and unpacked (default $CARGO_TARGET_DIR/ns3-wheel)
#   NS3_WHEEL         a wheel file already on disk to use instead of downloading
#   NS3_VERSION       the wheel's version (default 3.44.post0)
#   NS3_BUILD_DIR     where the program goes (default $CARGO_TARGET_DIR/ns3)
#   CXX, CXXFLAGS     the C++ compiler (default g++) and extra flags (default -O2)
set -euo pipefail

die() { echo "ns3/build.sh: $*" >&2; exit 1; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
[ -f "$repo/crates/ffi/include/manet_mutex.h" ] || die "no crates/ffi/include/manet_mutex.h under $repo"
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$repo/$target" ;; esac
wheel_dir="${NS3_WHEEL_DIR:-$target/ns3-wheel}"
version="${NS3_VERSION:-3.44.post0}"
out_dir="${NS3_BUILD_DIR:-$target/ns3}"
cxx="${CXX:-g++}"
cxxflags="${CXXFLAGS:--O2}"

command -v "$cxx" >/dev/null || die "no C++ compiler \`$cxx\` (set CXX)"
command -v cargo >/dev/null || die "no cargo on PATH"
command -v unzip >/dev/null || command -v python3 >/dev/null || die "need unzip or python3 to unpack the wheel"

start=$(date +%s)
mkdir -p "$wheel_dir" "$out_dir"

# ---- 1. The wheel: given, cached, or downloaded (never installed system-wide).
unpacked="$wheel_dir/unpacked"
if [ ! -f "$unpacked/.complete" ]; then
  wheel="${NS3_WHEEL:-}"
  if [ -n "$wheel" ]; then
    [ -f "$wheel" ] || die "NS3_WHEEL=$wheel is not a file"
  else
    wheel="$(ls "$wheel_dir"/ns3-"$version"-*.whl 2>/dev/null | head -n1 || true)"
    if [ -z "$wheel" ]; then
      command -v python3 >/dev/null || die "need python3 (pip) to download the ns3 wheel, or set NS3_WHEEL"
      echo "ns3/build.sh: downloading the ns3==$version wheel into $wheel_dir" >&2
      python3 -m pip download --no-deps --only-binary=:all: -d "$wheel_dir" "ns3==$version" >&2 \
        || die "pip download ns3==$version failed (no network? set NS3_WHEEL to a downloaded wheel)"
      wheel="$(ls "$wheel_dir"/ns3-"$version"-*.whl 2>/dev/null | head -n1 || true)"
      [ -n "$wheel" ] || die "pip reported success but no ns3-$version wheel is in $wheel_dir"
    fi
  fi
  echo "ns3/build.sh: unpacking $wheel" >&2
  rm -rf "$unpacked"
  mkdir -p "$unpacked"
  if command -v unzip >/dev/null; then
    unzip -q -o "$wheel" -d "$unpacked" || die "cannot unzip $wheel"
  else
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
      "$wheel" "$unpacked" || die "cannot unpack $wheel"
  fi
  touch "$unpacked/.complete"
fi
# The include and lib directories inside the wheel (ns3/include/ns3/core-module.h, ns3/lib64).
core_h="$(find "$unpacked" -path '*/include/ns3/core-module.h' -print -quit)"
[ -n "$core_h" ] || die "no include/ns3/core-module.h in the wheel under $unpacked"
ns3_inc="$(dirname "$(dirname "$core_h")")"
core_so="$(find "$unpacked" -name 'libns3*-core*.so' -print -quit)"
[ -n "$core_so" ] || die "no libns3*-core*.so in the wheel under $unpacked"
ns3_lib="$(dirname "$core_so")"
prefix="$(basename "$core_so" | sed -E 's/^lib(ns3[.0-9]*)-core.*\.so$/\1/')"  # ns3.44
libs=()
for m in core network internet wifi mobility aodv olsr applications propagation; do
  [ -f "$ns3_lib/lib$prefix-$m.so" ] || die "the wheel has no lib$prefix-$m.so in $ns3_lib"
  libs+=("-l$prefix-$m")
done

# ---- 2. The static library of crates/ffi.
echo "ns3/build.sh: cargo build --release -p manet-mutex-ffi" >&2
(cd "$repo" && CARGO_TARGET_DIR="$target" cargo build --release -j"${CARGO_JOBS:-1}" -p manet-mutex-ffi) \
  || die "cargo build of manet-mutex-ffi failed"
ffi_lib="$target/release/libmanet_mutex_ffi.a"
[ -f "$ffi_lib" ] || die "cargo built no $ffi_lib"

# ---- 3. The program.
srcs=("$here/mutex-app.cc" "$here/manet-mutex-sim.cc")
for s in "${srcs[@]}"; do [ -f "$s" ] || die "missing source $s"; done
echo "ns3/build.sh: $cxx -std=c++20 ${srcs[*]##*/} -> $out_dir/manet-mutex-sim" >&2
cstart=$(date +%s)
# shellcheck disable=SC2086
"$cxx" -std=c++20 $cxxflags -Wall -Wno-unused-parameter \
  -I "$here" -I "$repo/crates/ffi/include" -I "$ns3_inc" \
  "${srcs[@]}" -o "$out_dir/manet-mutex-sim" \
  "$ffi_lib" -L "$ns3_lib" "${libs[@]}" -Wl,-rpath,"$ns3_lib" \
  -lpthread -ldl -lm \
  || die "the C++ build failed"
end=$(date +%s)
echo "ns3/build.sh: built $out_dir/manet-mutex-sim in $((end - start)) s (g++ $((end - cstart)) s)" >&2
