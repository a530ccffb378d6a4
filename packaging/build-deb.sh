#!/usr/bin/env bash
# Builds the Debian package of NDR Studio from the `portable` preset (no -march=native) with Debian's
# hardening flags, and prints the path of the .deb. Run from anywhere; needs the build dependencies
# (packaging/install-deps.sh) and dpkg-dev (for dpkg-shlibdeps and dpkg-buildflags). JOBS=N sets the
# build's parallelism (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022 # the package's files and folders get 0644/0755, whatever the caller's umask

for tool in dpkg-shlibdeps dpkg-buildflags cpack; do
    command -v "$tool" >/dev/null || { echo "build-deb.sh: $tool is missing (apt-get install dpkg-dev cmake)" >&2; exit 1; }
done

# Debian's flags: -O2 -g and the hardening set (fortify, stack protector, relro, bindnow); the
# preset's Release flags (-O3 -DNDEBUG) come after them and win for optimisation.
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
cxxflags="$(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get CXXFLAGS)"
ldflags="$(dpkg-buildflags --get LDFLAGS)"

cmake --preset portable -DCMAKE_CXX_FLAGS="$cxxflags" -DCMAKE_EXE_LINKER_FLAGS="$ldflags" \
    -DCMAKE_SHARED_LINKER_FLAGS="$ldflags" >/dev/null
# Only what the package holds: the two programs (the engine's libraries come with them) and the
# compressed docs (the tests are not needed).
cmake --build --preset portable -j "${JOBS:-2}" --target ndr ndr-studio ndr_packaging_docs
(cd build/portable && cpack -G DEB >/dev/null)

deb="$(ls -t build/portable/ndr-studio_*.deb | head -n 1)"
echo "$(pwd)/$deb"
