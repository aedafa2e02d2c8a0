#!/usr/bin/env bash
# The install check (make test-install): `make lib && make install PREFIX=<tmp>`, then clients
# that see nothing of this tree but the installed copy (their sources are copied away first):
#   (a) a C program (examples/readme.c) built with `pkg-config --cflags --libs tenferro`
#   (b) a C++17 program (tests/test_cxx.cpp) built by g++ and clang++ the same way
#   (c) a CMake project (tests/install/CMakeLists.txt) with find_package(tenferro)
#   (d) ABI: the clients load libtenferro.so.0 from the prefix; a unit built with another
#       TFE_MAX_RANK fails to link (tfe_abi_rank<N>); a static link (pkg-config --static) runs
#   (e) DESTDIR staging: the files land under DESTDIR, the .pc names the final prefix
#   (f) the stable C ABI: a client of tenferro/capi.h alone, built with another TFE_MAX_RANK
set -euo pipefail
cd "$(dirname "$0")/../.."
MAKE=${MAKE:-make}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
say() { printf '== install: %s\n' "$*"; }

$MAKE --no-print-directory lib >/dev/null
$MAKE --no-print-directory install PREFIX="$prefix" >/dev/null
mkdir -p "$tmp/src"
cp examples/readme.c tests/test_cxx.cpp tests/install/CMakeLists.txt tests/capi/test_capi.c "$tmp/src/"
cd "$tmp/src"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cflags=$(pkg-config --cflags tenferro)
libs=$(pkg-config --libs tenferro)
say "pkg-config: $cflags $libs"

# (a) C, declarations mode from the .pc's flags
cc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 $cflags -o readme_c readme.c $libs
./readme_c >/dev/null 2>&1
say "C client (pkg-config) ran"

# (b) C++17 with g++ and clang++
for cxx in g++ clang++; do
  $cxx -std=c++17 -Wall -Wextra -Wpedantic -Werror -O2 $cflags -o "client_$cxx" test_cxx.cpp $libs
  "./client_$cxx" >/dev/null
  say "C++17 client ($cxx, pkg-config) ran"
done

# (c) CMake
cmake -S . -B cmake-build -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build cmake-build >/dev/null
./cmake-build/readme_c >/dev/null 2>&1
./cmake-build/client_cxx >/dev/null
say "CMake client (find_package(tenferro)) ran"

# (d) ABI: the library the clients load is the installed one
for exe in readme_c client_g++ cmake-build/client_cxx; do
  where=$(ldd "$exe" | awk '$1 == "libtenferro.so.0" { print $3 }')
  [ "$where" = "$prefix/lib/libtenferro.so.0" ] || { echo "$exe loads libtenferro from '$where'"; exit 1; }
done
test "$(readlink "$prefix/lib/libtenferro.so.0")" = "libtenferro.so.$(sed -n 's/^#define TFE_VERSION_STRING "\(.*\)"/\1/p' "$prefix/include/tenferro/config.h")"
if nm -D --defined-only "$prefix/lib/libtenferro.so.0" | grep -q ' tfe__'; then echo "tfe__ symbols exported"; exit 1; fi
say "clients load $prefix/lib/libtenferro.so.0 (soname link to the versioned file); no tfe__ export"
if cc -std=c11 -O0 $cflags -DTFE_MAX_RANK=8 -o rank8 readme.c $libs 2>rank8.err; then
  echo "a unit with TFE_MAX_RANK=8 linked against a TFE_MAX_RANK=64 library"; exit 1
fi
grep -q 'tfe_abi_rank8' rank8.err
say "a unit built with TFE_MAX_RANK=8 fails to link: $(grep -o "undefined reference to [^ ]*tfe_abi_rank8[^ ]*" rank8.err | head -1)"
cc -std=c11 -O2 $cflags -o readme_static readme.c "$prefix/lib/libtenferro.a" \
  $(pkg-config --static --libs tenferro | sed -e 's/-ltenferro//' -e "s|-Wl,-rpath,$prefix/lib||")
./readme_static >/dev/null 2>&1
! ldd readme_static | grep -q libtenferro
say "static link (libtenferro.a, pkg-config --static) ran"

# (f) tenferro/capi.h has no layout that depends on a build macro: a client built with
#     TFE_MAX_RANK=8 links against and runs with the installed TFE_MAX_RANK=64 library
#     libtenferro_c.so.1 exports exactly capi.h's entry points
cc -std=c11 -Wall -Wextra -Wpedantic -Werror -O2 -DTFE_MAX_RANK=8 -I"$prefix/include" -o capi_client test_capi.c \
  -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -ltenferro_c
./capi_client >/dev/null
where=$(ldd capi_client | awk '$1 == "libtenferro_c.so.1" { print $3 }')
[ "$where" = "$prefix/lib/libtenferro_c.so.1" ] || { echo "capi_client loads libtenferro_c from '$where'"; exit 1; }
sed -n 's/^TFE_CAPI_EXPORT [^(]*[ *]\(tfe_[a-z_0-9]*\)(.*/\1/p' "$prefix/include/tenferro/capi.h" | sort > names.h
nm -D --defined-only "$prefix/lib/libtenferro_c.so.1" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort > names.so
diff names.h names.so
say "C ABI client (tenferro/capi.h only, TFE_MAX_RANK=8) ran against the installed libtenferro_c.so.1 ($(wc -l < names.so) names, exactly the header's)"

# (e) DESTDIR
cd - >/dev/null
$MAKE --no-print-directory install DESTDIR="$tmp/stage" PREFIX=/opt/tenferro >/dev/null
test -f "$tmp/stage/opt/tenferro/include/tenferro.h"
test -L "$tmp/stage/opt/tenferro/lib/libtenferro.so"
test -f "$tmp/stage/opt/tenferro/lib/cmake/tenferro/tenferroConfigVersion.cmake"
grep -q '^prefix=/opt/tenferro$' "$tmp/stage/opt/tenferro/lib/pkgconfig/tenferro.pc"
say "DESTDIR staging ok"
say "all passed"
