#!/usr/bin/env bash
# What a bare GPU machine lacks, gathered here into .gpu-bundle/ (ignored by git; carried
# with the working tree to the GPU machine):
#
#   googletest/          GoogleTest's sources (the GPU image has no GoogleTest)
#   postgresql.tar.xz    a PostgreSQL 15 server and client and the libraries they need, from
#                        Debian's packages (apt-get download, dpkg -x: nothing is installed
#                        here or there), with pgmate's extension built here installed into
#                        that tree, and the pgmate client with libpqxx
#   MANIFEST             the packages, the files' sizes, and the checks below
#
#   scripts/gpu-bundle.sh [PGMATE_BUILD_DIR]
#
# The tree unpacks anywhere (PostgreSQL finds its share and lib folders relative to its
# binaries): scripts/gpu-check.sh --stage loop unpacks it into a temporary folder and runs
# it with LD_LIBRARY_PATH, never touching the machine's own folders. What a server does
# not need is left out (JIT/LLVM, documentation, translations, the other client programs),
# and the C library, libstdc++ and libgcc are the machine's own (any glibc from 2.36 on):
# the packed tree stays under 60 MiB.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${1:-build}
bundle=$root/.gpu-bundle
limit_mib=60
pg_bin=/usr/lib/postgresql/15/bin
# The programs the loop stage runs, and where the bundle keeps them.
pg_programs=(postgres initdb pg_ctl psql pg_dump pg_isready createdb)

test -d /usr/src/googletest || { echo "gpu-bundle: GoogleTest sources not found: run 'make deps' first" >&2; exit 1; }
test -x "$pg_bin/postgres" || { echo "gpu-bundle: PostgreSQL 15 not found: run 'make deps' first" >&2; exit 1; }
test -x "$build/bin/pgmate" || { echo "gpu-bundle: $build/bin/pgmate not built: run 'make build' first" >&2; exit 1; }
command -v xz >/dev/null || { echo "gpu-bundle: xz not found: run 'make deps' first" >&2; exit 1; }

rm -rf "$bundle"
mkdir -p "$bundle"
cp -r /usr/src/googletest "$bundle/googletest"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tree=$work/tree
mkdir -p "$tree" "$work/debs"

# ---- the packages: PostgreSQL's, and the owner of every library its programs, the
# extension and the client load (ldd), but the C library's, libstdc++'s and libgcc's.
make -s all >/dev/null
objects=("${pg_programs[@]/#/$pg_bin/}" "$root/pgmate.so" "$build/bin/pgmate")
libraries=$(ldd "${objects[@]}" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u)
packages=(postgresql-15 postgresql-client-15 libpq5)
for lib in $libraries; do
  real=$(readlink -f "$lib")
  owner=$(dpkg -S "$real" 2>/dev/null || dpkg -S "$lib" 2>/dev/null || dpkg -S "${lib#/usr}" 2>/dev/null || true)
  owner=${owner%%:*}
  case $owner in
    "") echo "gpu-bundle: no package owns $lib" >&2; exit 1 ;;
    libc6 | libstdc++6 | libgcc-s1) ;;
    *) packages+=("$owner") ;;
  esac
done
mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u)
echo "gpu-bundle: ${#packages[@]} packages: ${packages[*]}"
# Without package lists (a machine whose packages were all there, so the setup step never
# ran apt-get update) the download fails once: update the lists and try again.
download() { (cd "$work/debs" && apt-get download "${packages[@]}" >/dev/null 2>"$work/apt.log"); }
if ! download; then
  echo "gpu-bundle: apt-get download failed; apt-get update, then again" >&2
  apt-get update -q >/dev/null 2>>"$work/apt.log" || true
  download || { cat "$work/apt.log" >&2; echo "gpu-bundle: apt-get download failed" >&2; exit 1; }
fi
for deb in "$work"/debs/*.deb; do dpkg -x "$deb" "$tree"; done

# ---- what a server does not need
rm -rf "$tree"/usr/share/doc "$tree"/usr/share/man "$tree"/usr/share/locale "$tree"/usr/share/lintian \
  "$tree"/usr/share/bug "$tree"/usr/share/postgresql-common "$tree"/usr/share/perl5 "$tree"/usr/share/postgresql/15/man \
  "$tree"/usr/lib/postgresql/15/lib/bitcode "$tree"/usr/lib/postgresql/15/lib/llvmjit* "$tree"/etc "$tree"/usr/bin \
  "$tree"/usr/sbin "$tree"/lib/systemd "$tree"/usr/lib/systemd
for program in "$tree/$pg_bin"/*; do
  name=$(basename "$program")
  printf '%s\n' "${pg_programs[@]}" | grep -qx "$name" || rm -f "$program"
done

# ---- pgmate: the extension as `make install` puts it, into the tree; the client beside it
# (pgmate-worker is not carried: the GPU machine builds its own against its CUDA LibTorch.)
make -s install DESTDIR="$tree" >/dev/null
rm -f "$tree/$pg_bin/pgmate-worker"
cp "$build/bin/pgmate" "$tree/$pg_bin/pgmate"
strip --strip-debug "$tree"/usr/lib/postgresql/15/lib/pgmate.so "$tree/$pg_bin/pgmate"
# The ECO lines the arena opens from (pgmate import --openings; pgn-extract's file).
mkdir -p "$tree/usr/share/pgn-extract"
cp /usr/share/pgn-extract/eco.pgn "$tree/usr/share/pgn-extract/eco.pgn"

# ---- checks: every library of every program resolves inside the tree (or is the C
# library's, libstdc++'s or libgcc's), and the server finds its share folder.
libpath=$tree/usr/lib/x86_64-linux-gnu:$tree/lib/x86_64-linux-gnu
missing=$(LD_LIBRARY_PATH=$libpath ldd "$tree/$pg_bin"/* "$tree"/usr/lib/postgresql/15/lib/pgmate.so |
          awk '$2 == "=>" {print $1, $3}' |
          grep -v -E " $tree/| /(usr/)?lib/x86_64-linux-gnu/(libc|libm|libdl|libpthread|librt|libresolv|libstdc\+\+|libgcc_s)\.so" || true)
if [ -n "$missing" ]; then
  echo "gpu-bundle: libraries from outside the bundle:" >&2
  echo "$missing" >&2
  exit 1
fi
share=$(LD_LIBRARY_PATH=$libpath "$tree/$pg_bin/postgres" --describe-config >/dev/null 2>&1 && echo ok || echo failed)
[ "$share" = ok ] || { echo "gpu-bundle: the bundled postgres does not run" >&2; exit 1; }

tar -C "$tree" -cJf "$bundle/postgresql.tar.xz" .
{
  echo "packages: ${packages[*]}"
  echo "unpacked: $(du -sm "$tree" | cut -f1) MiB; packed: $(du -m "$bundle/postgresql.tar.xz" | cut -f1) MiB"
  echo "programs: ${pg_programs[*]} pgmate"
} >"$bundle/MANIFEST"
size=$(du -sm "$bundle" | cut -f1)
echo "gpu-bundle: .gpu-bundle is $size MiB ($(sed -n 2p "$bundle/MANIFEST"))"
if [ "$size" -ge "$limit_mib" ]; then
  echo "gpu-bundle: over $limit_mib MiB" >&2
  exit 1
fi
