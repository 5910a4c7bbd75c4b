# Precompiled headers (issue 36). Most files include the same heavy headers:
# the standard library's containers and streams and Boost.JSON, plus
# GoogleTest in tests/. Without this, every file parses them again (a third to
# a half of a file's compile time). Two host targets each build one
# precompiled header; every product target (crh too) reuses the first, every
# test the second. CLI11 stays out: its header defines objects (the
# validators) that every file including it compiles, about 5 s of code
# generation that a precompiled header cannot save, so it is included only
# by the files that define options.
#
# GCC uses a precompiled header only where the macros and the code-generation
# flags equal those it was made with; the Boost definitions below are therefore
# global, and -Werror=invalid-pch turns a mismatch into a build error instead
# of a quiet fallback to parsing everything again. Clang builds (ASan+UBSan,
# fuzz) go without, which keeps one build where a missing #include still fails.

if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(_crh_pch_default ON)
else()
  set(_crh_pch_default OFF)
endif()
option(CRH_PCH "Precompile the heavy headers once per kind of target (GCC)" ${_crh_pch_default})

# Every target sees the same Boost configuration, so one precompiled header fits all.
add_compile_definitions(
  BOOST_ASIO_SEPARATE_COMPILATION BOOST_BEAST_SEPARATE_COMPILATION BOOST_ASIO_NO_DEPRECATED
  BOOST_JSON_DYN_LINK BOOST_JSON_NO_LIB BOOST_CONTAINER_DYN_LINK BOOST_CONTAINER_NO_LIB
  BOOST_URL_DYN_LINK BOOST_URL_NO_LIB)

set(CRH_PCH_PRODUCT_HEADERS
  <algorithm> <array> <atomic> <chrono> <cmath> <cstddef> <cstdint> <cstdio> <cstdlib> <cstring>
  <filesystem> <fstream> <functional> <iostream> <limits> <map> <memory> <mutex> <optional>
  <random> <set> <span> <sstream> <stdexcept> <string> <string_view> <thread> <unordered_map>
  <utility> <variant> <vector>
  <boost/json.hpp>)

# crh_pch_host(<name> <header>...): a library of one empty file that builds the
# precompiled header of these headers for others to reuse.
function(crh_pch_host name)
  if(NOT CRH_PCH)
    return()
  endif()
  add_library(${name} STATIC ${PROJECT_SOURCE_DIR}/cmake/pch_host.cpp)
  target_precompile_headers(${name} PRIVATE ${ARGN})
  target_compile_options(${name} PRIVATE -Werror=invalid-pch)
endfunction()

# crh_use_pch(<host> <target>...): these targets reuse <host>'s precompiled header.
function(crh_use_pch host)
  if(NOT CRH_PCH)
    return()
  endif()
  foreach(target IN LISTS ARGN)
    set_target_properties(${target} PROPERTIES PRECOMPILE_HEADERS_REUSE_FROM ${host})
    target_compile_options(${target} PRIVATE -Werror=invalid-pch)
  endforeach()
endfunction()

# Unity batches (issue 36): with the precompiled header, what is left of a
# file's compile time is mostly instantiating and optimizing the same
# templates (Asio's coroutines, Beast, Boost.JSON, GoogleTest) that its
# neighbours instantiate too; a batch of files does that once. Measured on
# crh alone (README, Build time): 179 s in batches of 4 against 249 s one file
# at a time, 25 MB against 35 MB; the longest step grows (22 s against 19 s),
# and an edit recompiles its batch. Off where the precompiled header is off
# (clang: the ASan+UBSan and fuzz builds), so a file that leans on a
# neighbour's includes or names still fails to compile there.
option(CRH_UNITY "Compile product and test files in unity batches (with CRH_PCH)" ${CRH_PCH})

# The tests alone in batches, the product one file at a time: the ASan+UBSan
# build (CI's first step, alone on both cores) keeps every product file, what
# a user builds, compiling on its own; its test files in batches took about
# half the time (clang, 5.4 s against 10.2 s for a batch of four).
# AUTO follows CRH_UNITY at every configure: a default copied into the cache
# at the first configure would keep the batches on after -DCRH_UNITY=OFF.
set(CRH_UNITY_TESTS AUTO CACHE STRING "Compile the test files in unity batches: AUTO (as CRH_UNITY), ON or OFF")
set_property(CACHE CRH_UNITY_TESTS PROPERTY STRINGS AUTO ON OFF)
if(CRH_UNITY_TESTS STREQUAL "AUTO")
  set(CRH_UNITY_TESTS_ON ${CRH_UNITY})
elseif(CRH_UNITY_TESTS)
  set(CRH_UNITY_TESTS_ON ON)
else()
  set(CRH_UNITY_TESTS_ON OFF)
endif()

# crh_use_unity(<option> <batch size> <target>...): batches where <option>
# (CRH_UNITY for the product, CRH_UNITY_TESTS_ON for the tests) is on.
function(crh_use_unity option size)
  if(NOT ${option})
    return()
  endif()
  set_target_properties(${ARGN} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${size})
endfunction()

if(CRH_PCH AND CRH_CCACHE)
  # ccache caches a compile that uses a precompiled header only with this sloppiness.
  set(CMAKE_CXX_COMPILER_LAUNCHER env CCACHE_SLOPPINESS=pch_defines,time_macros ${CRH_CCACHE})
endif()
