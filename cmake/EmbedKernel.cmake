# cmake -DIN=<file.cl> -DOUT=<header> -DVAR=<name> -P EmbedKernel.cmake
# Writes a header holding the OpenCL source as a C++ raw string literal, so the
# kernel ships inside its module and edits to the .cl rebuild it.
file(READ ${IN} _src)
string(FIND "${_src}" ")dynrt_cl\"" _bad)
if(NOT _bad EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string terminator )dynrt_cl\"")
endif()
get_filename_component(_name ${IN} NAME)
file(WRITE ${OUT}.tmp "// Generated from ${_name} by EmbedKernel.cmake; do not edit.\n#pragma once\nstatic const char ${VAR}[] = R\"dynrt_cl(${_src})dynrt_cl\";\n")
file(RENAME ${OUT}.tmp ${OUT})
