#!/usr/bin/env bash
# Builds a Debian package of hipshadow from `meson install --destdir`, with dpkg-deb.
#
#   tools/make-deb.sh [BUILD_DIR [OUT_DIR]]
#
# BUILD_DIR (default build-deb) is configured with --prefix=/usr if it does not exist yet; an
# existing one must already have prefix /usr.  The package (hipshadow_<version>_<arch>.deb) is
# written to OUT_DIR (default: the current directory) and its path is the one line printed on
# stdout; everything else goes to stderr.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build-deb}
outdir=${2:-.}
for tool in meson dpkg dpkg-deb; do
    command -v "$tool" >/dev/null || { echo "make-deb: $tool not found" >&2; exit 2; }
done

if [ ! -f "$build/meson-private/coredata.dat" ]; then
    meson setup "$build" "$src" --prefix=/usr >&2
fi
prefix=$(meson introspect "$build" --buildoptions |
         python3 -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
if [ "$prefix" != /usr ]; then
    echo "make-deb: $build has prefix $prefix; a package needs /usr (meson configure $build --prefix=/usr)" >&2
    exit 2
fi
version=$(meson introspect "$build" --projectinfo | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
arch=$(dpkg --print-architecture)

meson compile -C "$build" >&2

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pkg=$stage/hipshadow
meson install --no-rebuild --quiet --destdir "$pkg" -C "$build" >&2

# Shared-library dependencies of what was installed: dpkg-shlibdeps where dpkg-dev is there,
# else the packages that Debian 12 ships them in.
depends="libc6, libunwind8, libdw1"
if command -v dpkg-shlibdeps >/dev/null; then
    mapfile -t elves < <(find "$pkg" -type f \( -name '*.so*' -o -perm -u+x \) -exec sh -c \
        'head -c 4 "$1" | grep -q ELF' _ {} \; -print)
    mkdir -p "$stage/shlibs/debian"
    printf 'Source: hipshadow\n\nPackage: hipshadow\nArchitecture: any\n' >"$stage/shlibs/debian/control"
    if found=$(cd "$stage/shlibs" && dpkg-shlibdeps -O "${elves[@]}" 2>/dev/null); then
        depends=${found#shlibs:Depends=}
    fi
fi

mkdir -p "$pkg/DEBIAN" "$pkg/usr/share/doc/hipshadow"
cp "$src/README.md" "$pkg/usr/share/doc/hipshadow/README.md"
size=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
cat >"$pkg/DEBIAN/control" <<EOF
Package: hipshadow
Version: $version
Architecture: $arch
Maintainer: ${DEBFULLNAME:-hipshadow maintainers} <${DEBEMAIL:-hipshadow@localhost}>
Installed-Size: $size
Depends: $depends
Section: devel
Priority: optional
Description: checks the GPU memory copies of HIP and CUDA programs
 hipshadow is an LD_PRELOAD tool: "hipshadow -- program" checks every memory
 copy and memset the program makes through the HIP (or, with --cuda, the CUDA)
 runtime against the allocations it made, and reports out-of-bounds copies,
 use after free, wrong directions and streams with the allocation and call
 stacks.  The package holds the launcher, the post-mortem report tool
 (hipshadow report), the preload libraries, and the header-only annotation API
 with its pkg-config file.
EOF

mkdir -p "$outdir"
deb=$(cd "$outdir" && pwd)/hipshadow_${version}_${arch}.deb
dpkg-deb --root-owner-group --build "$pkg" "$deb" >&2
echo "$deb"
