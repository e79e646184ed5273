# dynrt_sdk_id(<out var> <source root>): the SDK id, a digest of exactly the
# headers a module compiles against: core/include, registry/include and the
# OpenCL op SDK (plugins/ocl/sdk/include, .cl helpers included). It goes into
# the module build fingerprint (module_abi.hpp), so a module built against
# other SDK headers is refused at load time; runtime/ headers are not part of
# it, so editing them leaves built modules loadable.
#
# Script mode, for tests: cmake -DROOT=<source root> -P SdkId.cmake prints
# "DYNRT_SDK_ID=<id>".
function(dynrt_sdk_headers out root)
  set(_depends CONFIGURE_DEPENDS)
  if(CMAKE_SCRIPT_MODE_FILE)
    set(_depends)
  endif()
  file(GLOB _h ${_depends}
       ${root}/core/include/dynrt/*.hpp
       ${root}/registry/include/dynrt/*.hpp
       ${root}/plugins/ocl/sdk/include/dynrt/*.hpp
       ${root}/plugins/ocl/sdk/include/dynrt/*.cl)
  list(SORT _h)
  set(${out} ${_h} PARENT_SCOPE)
endfunction()

function(dynrt_sdk_id out root)
  dynrt_sdk_headers(_headers ${root})
  set(_text "")
  foreach(_f ${_headers})
    file(READ ${_f} _c)
    string(APPEND _text "${_c}")
  endforeach()
  string(SHA256 _hash "${_text}")
  string(SUBSTRING ${_hash} 0 12 _id)
  set(${out} ${_id} PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND DEFINED ROOT)
  dynrt_sdk_id(_id ${ROOT})
  message("DYNRT_SDK_ID=${_id}")
endif()
