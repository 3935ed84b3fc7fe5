# The built-in CUDA ops (included by kernels/CMakeLists.txt when TUNEKIT_CUDA is on): the ops'
# C++ sources, and their CUDA C sources, compiled by NVRTC at run time and embedded as string
# constants so the library needs no file at run time (kernels/cuda/<name>.cu ->
# <build>/kernels/generated/cuda/<name>_cu.hpp), as the OpenCL ones are.
target_sources(tunekit_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cu_common.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cu_sgemm.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cu_rows.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cu_conv2d.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cuda_catalog.cpp
)
foreach(cu_name sgemm softmax rmsnorm conv2d)
  file(READ ${CMAKE_CURRENT_LIST_DIR}/${cu_name}.cu TUNEKIT_CU_SOURCE)
  if(TUNEKIT_CU_SOURCE MATCHES "\\)tkcu\"")
    message(FATAL_ERROR "kernels/cuda/${cu_name}.cu contains the raw-string delimiter )tkcu\"")
  endif()
  set(TUNEKIT_CU_NAME ${cu_name})
  configure_file(${CMAKE_CURRENT_LIST_DIR}/cu_source.hpp.in
                 ${CMAKE_CURRENT_BINARY_DIR}/generated/cuda/${cu_name}_cu.hpp @ONLY)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               ${CMAKE_CURRENT_LIST_DIR}/${cu_name}.cu ${CMAKE_CURRENT_LIST_DIR}/cu_source.hpp.in)
endforeach()
