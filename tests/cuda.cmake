# The CUDA backend's tests (included by tests/CMakeLists.txt when TUNEKIT_CUDA is on): their own
# executable; the ones that need a GPU report SKIPPED without one.
file(GLOB TUNEKIT_CUDA_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/backends/cuda/*_test.cpp
     ${CMAKE_CURRENT_SOURCE_DIR}/unit/kernels/cuda/*_test.cpp)
if(TUNEKIT_CUDA_TESTS)
  tunekit_test_target(tunekit_cuda_tests ${TUNEKIT_CUDA_TESTS})
  target_link_libraries(tunekit_cuda_tests PRIVATE tunekit_kernels)
  target_include_directories(tunekit_cuda_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/unit)
endif()
