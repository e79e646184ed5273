# dynrt_add_library(<name> <source dir> <include dir> [<public link libs>...])
#
# One of dynrt's layered libraries (core, registry, runtime, ocl_sdk):
# libdynrt_<name>.so from <source dir>/*.cpp, target dynrt_<name> with alias
# dynrt::<name>. Its include path is <include dir> plus what the libraries it
# links give, so including a header of a layer above is a build error.
function(dynrt_add_library name src_dir include_dir)
  file(GLOB _sources CONFIGURE_DEPENDS ${src_dir}/*.cpp)
  add_library(dynrt_${name} SHARED ${_sources})
  add_library(dynrt::${name} ALIAS dynrt_${name})
  target_include_directories(dynrt_${name} PUBLIC
    $<BUILD_INTERFACE:${include_dir}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_options(dynrt_${name} PRIVATE ${DYNRT_WARNINGS})
  # No one interposes a symbol of these libraries, so calls inside one may be
  # direct and inlined (gcc otherwise routes every call to an exported
  # function through the PLT, which costs the per-primitive flow ~15%).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(dynrt_${name} PRIVATE -fno-semantic-interposition)
  endif()
  target_link_libraries(dynrt_${name} PUBLIC ${ARGN})
  set_target_properties(dynrt_${name} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME dynrt_${name}
    VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
    # Installed, the libraries find each other in their own folder.
    INSTALL_RPATH "$ORIGIN")
endfunction()

# dynrt_add_subdirectories(): every folder of the current source folder that
# has a CMakeLists.txt, in name order (op modules, device plugins): adding one
# touches nothing outside its folder.
macro(dynrt_add_subdirectories)
  file(GLOB _dynrt_dirs LIST_DIRECTORIES true ${CMAKE_CURRENT_SOURCE_DIR}/*)
  list(SORT _dynrt_dirs)
  foreach(_dir ${_dynrt_dirs})
    if(IS_DIRECTORY ${_dir} AND EXISTS ${_dir}/CMakeLists.txt)
      add_subdirectory(${_dir})
    endif()
  endforeach()
endmacro()
