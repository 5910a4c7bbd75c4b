# Each part of the harness (core, contracts, loadgen, reports, reference) is a
# library that exposes only the headers other parts may use. The build makes
# two include roots per part out of links to its sources:
#   include/public/<part>/<part>/<header>   the headers listed as public
#   include/private/<part>/<part>           the whole part, for its own files
# A part's own files see its private root; whoever links it sees only the
# public one, so an include of another part's internals, or of a part that is
# not a dependency (a wrong-way arrow), fails to compile.

# crh_part_headers(<target> <part> PUBLIC <header>...)
function(crh_part_headers target part)
  cmake_parse_arguments(ARG "" "" "PUBLIC" ${ARGN})
  set(public_root ${PROJECT_BINARY_DIR}/include/public/${part})
  set(private_root ${PROJECT_BINARY_DIR}/include/private/${part})
  file(REMOVE_RECURSE ${public_root} ${private_root})
  file(MAKE_DIRECTORY ${public_root}/${part} ${private_root})
  foreach(header IN LISTS ARG_PUBLIC)
    if(NOT EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${header})
      message(FATAL_ERROR "${part}: public header ${header} does not exist")
    endif()
    file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR}/${header} ${public_root}/${part}/${header} SYMBOLIC)
  endforeach()
  file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR} ${private_root}/${part} SYMBOLIC)
  target_include_directories(${target} BEFORE PRIVATE ${private_root})
  target_include_directories(${target} PUBLIC ${public_root})
  set_property(GLOBAL PROPERTY CRH_PRIVATE_ROOT_${part} ${private_root})
endfunction()

# crh_see_internals(<target> <part>...): tests, fuzz targets and benchmarks
# look inside the parts they exercise.
function(crh_see_internals target)
  foreach(part IN LISTS ARGN)
    get_property(root GLOBAL PROPERTY CRH_PRIVATE_ROOT_${part})
    if(NOT root)
      message(FATAL_ERROR "crh_see_internals: unknown part ${part}")
    endif()
    target_include_directories(${target} BEFORE PRIVATE ${root})
  endforeach()
endfunction()
