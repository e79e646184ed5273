# dynrt_add_module(<target> SOURCES <src>... [OUTPUT_NAME <name>] [OUTPUT_DIR <dir>])
#
# Builds a dynrt module: a shared object loaded at run time by the module loader.
# Flags follow docs/module-abi.md: hidden visibility (only the two entry points
# are exported), -fno-gnu-unique (so unloading really unloads) and
# --no-undefined (a missing symbol fails the build, not the first call).
# Used in-tree and, installed with the SDK, by out-of-tree modules after
# find_package(dynrt).
set(DYNRT_EMBED_KERNEL_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/EmbedKernel.cmake)

function(dynrt_add_module target)
  cmake_parse_arguments(ARG "" "OUTPUT_NAME;OUTPUT_DIR" "SOURCES" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES})
  # The SDK: core, registry and the device op SDKs (OpenCL, cpu), never the runtime.
  if(TARGET dynrt_registry)
    target_link_libraries(${target} PRIVATE dynrt_registry dynrt_ocl_sdk dynrt_cpu_sdk)
  else()
    target_link_libraries(${target} PRIVATE dynrt::registry dynrt::ocl_sdk dynrt::cpu_sdk)
  endif()
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    CXX_STANDARD 17
    CXX_STANDARD_REQUIRED ON
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(ARG_OUTPUT_NAME)
    set_target_properties(${target} PROPERTIES OUTPUT_NAME ${ARG_OUTPUT_NAME})
  endif()
  if(ARG_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIR})
  elseif(DEFINED DYNRT_MODULE_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${DYNRT_MODULE_OUTPUT_DIR})
  endif()
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -fno-gnu-unique)
  endif()
  target_link_options(${target} PRIVATE -Wl,--no-undefined)
  # Installed, a module finds the SDK libraries it links from any prefix: an
  # in-tree one sits in <libdir>/dynrt, one level below them; an out-of-tree
  # one keeps the folder of the SDK it was built against.
  if(TARGET dynrt_registry)
    set_target_properties(${target} PROPERTIES INSTALL_RPATH "$ORIGIN/..")
  else()
    set_target_properties(${target} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  endif()
  # Out of tree (the SDK's config set DYNRT_SDK_CXX_COMPILER_ID): say now, not at
  # load time, when this compiler gives a fingerprint the runtime will refuse.
  if(DEFINED DYNRT_SDK_CXX_COMPILER_ID AND NOT TARGET dynrt_registry)
    string(REGEX MATCH "^[0-9]+" _sdk_major "${DYNRT_SDK_CXX_COMPILER_VERSION}")
    string(REGEX MATCH "^[0-9]+" _our_major "${CMAKE_CXX_COMPILER_VERSION}")
    if(NOT CMAKE_CXX_COMPILER_ID STREQUAL DYNRT_SDK_CXX_COMPILER_ID OR NOT _our_major STREQUAL _sdk_major)
      message(WARNING "dynrt: module ${target} is compiled with ${CMAKE_CXX_COMPILER_ID} "
        "${CMAKE_CXX_COMPILER_VERSION}, the dynrt SDK with ${DYNRT_SDK_CXX_COMPILER_ID} "
        "${DYNRT_SDK_CXX_COMPILER_VERSION}: the module's build fingerprint will differ and the "
        "runtime will refuse to load it. Configure with -DCMAKE_CXX_COMPILER=<the SDK's compiler>.")
    endif()
  endif()
endfunction()

# In-tree op: dynrt_add_op(NAME <op> SOURCES <src>... [TESTS <test src>...])
# builds libdynrt_op_<op>.so into the module folder and one test executable
# test_op_<op> (linked with the op test library, tests/support/op_test.hpp) run
# by ctest. Only used inside the dynrt source tree.
#
# A sweep file sweep.txt in the op's folder (docs/test-op.md) is installed as
# share/dynrt/sweeps/<op>.txt and run by ctest through `dynrt test-op <op>
# --sweep-file`: as sweep_<op>_cpu on the cpu impls and, when the op has
# KERNELS or says OCL (OpenCL impls from a shared SDK kernel, e.g.
# add_copy_ocl_impls), as sweep_<op>_ocl on its shape-agnostic OpenCL impl
# (skipped without an OpenCL platform). The static OpenCL impls build a
# kernel per shape (about a second each on a cold PoCL cache; half of a
# sweep's time): the op's <Op>Impls and <Op>Dynamic tests and the ONNX node
# tests run them, and `dynrt test-op <op> --device ocl` runs both.
#
# KERNELS <file.cl>...: each OpenCL source is embedded at build time as a
# header "<stem>_cl.hpp" defining `static const char <stem>_cl[]` (the file's
# text), reachable from the op's sources with #include "<stem>_cl.hpp".
function(dynrt_add_op)
  cmake_parse_arguments(ARG "OCL" "NAME" "SOURCES;TESTS;KERNELS" ${ARGN})
  set(_generated)
  foreach(_cl ${ARG_KERNELS})
    get_filename_component(_stem ${_cl} NAME_WE)
    get_filename_component(_abs ${_cl} ABSOLUTE)
    set(_hdr ${CMAKE_CURRENT_BINARY_DIR}/generated/${_stem}_cl.hpp)
    add_custom_command(OUTPUT ${_hdr}
      COMMAND ${CMAKE_COMMAND} -DIN=${_abs} -DOUT=${_hdr} -DVAR=${_stem}_cl -P ${DYNRT_EMBED_KERNEL_SCRIPT}
      DEPENDS ${_abs} ${DYNRT_EMBED_KERNEL_SCRIPT}
      COMMENT "Embedding ${_stem}.cl")
    list(APPEND _generated ${_hdr})
  endforeach()
  # Every op of the tree, for the tests that run per op (tests/conformance).
  set_property(GLOBAL APPEND PROPERTY DYNRT_OPS ${ARG_NAME})
  dynrt_add_module(dynrt_op_${ARG_NAME} SOURCES ${ARG_SOURCES} ${_generated} OUTPUT_NAME dynrt_op_${ARG_NAME})
  if(_generated)
    target_include_directories(dynrt_op_${ARG_NAME} PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated)
  endif()
  target_compile_options(dynrt_op_${ARG_NAME} PRIVATE ${DYNRT_WARNINGS})
  install(TARGETS dynrt_op_${ARG_NAME} LIBRARY DESTINATION ${DYNRT_INSTALL_MODULE_DIR})
  add_dependencies(dynrt_modules dynrt_op_${ARG_NAME})
  if(DYNRT_BUILD_TESTS AND ARG_TESTS)
    add_executable(test_op_${ARG_NAME} ${ARG_TESTS})
    target_link_libraries(test_op_${ARG_NAME} PRIVATE dynrt_test_support)
    target_compile_options(test_op_${ARG_NAME} PRIVATE ${DYNRT_WARNINGS})
    add_dependencies(test_op_${ARG_NAME} dynrt_modules)
    gtest_discover_tests(test_op_${ARG_NAME} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS op)
  endif()
  set(_sweep ${CMAKE_CURRENT_SOURCE_DIR}/sweep.txt)
  if(EXISTS ${_sweep})
    install(FILES ${_sweep} DESTINATION ${CMAKE_INSTALL_DATADIR}/dynrt/sweeps RENAME ${ARG_NAME}.txt)
    if(DYNRT_BUILD_TESTS)
      set(_devices cpu)
      if(ARG_KERNELS OR ARG_OCL)
        list(APPEND _devices ocl)
      endif()
      foreach(_dev ${_devices})
        set(_only)
        if(_dev STREQUAL "ocl")
          set(_only --impl ocl_dynamic)
        endif()
        add_test(NAME sweep_${ARG_NAME}_${_dev}
          COMMAND dynrt_cli test-op ${ARG_NAME} --sweep-file ${_sweep} --device ${_dev} ${_only}
                  --modules-dir ${DYNRT_MODULE_OUTPUT_DIR})
        # The harness notes an impl type whose engine cannot be created.
        set_tests_properties(sweep_${ARG_NAME}_${_dev} PROPERTIES LABELS "op;sweep" TIMEOUT 600
          SKIP_REGULAR_EXPRESSION "skipped, (no 'ocl' engine|cannot create the 'ocl' engine)")
      endforeach()
    endif()
  endif()
endfunction()
