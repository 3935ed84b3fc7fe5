# The CUDA backend's tests (included by tests/CMakeLists.txt when TUNEKIT_CUDA is on): their own
# executable, labelled tunekit_cuda_tests; the ones that need a GPU report SKIPPED without one.
file(GLOB TUNEKIT_CUDA_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/unit/backends/cuda/*_test.cpp
     ${CMAKE_CURRENT_SOURCE_DIR}/unit/kernels/cuda/*_test.cpp)
if(TUNEKIT_BUILD_TOOLS)
  list(APPEND TUNEKIT_CUDA_TESTS ${CMAKE_CURRENT_SOURCE_DIR}/integration/cuda_cli_test.cpp)
endif()
tunekit_test_target(tunekit_cuda_tests ${TUNEKIT_CUDA_TESTS})
target_link_libraries(tunekit_cuda_tests PRIVATE tunekit_kernels)
# TODO(unity): the test files define the same anonymous-namespace fixtures (kSource, Fixture,
# ...): compiled one by one until they are renamed.
set_target_properties(tunekit_cuda_tests PROPERTIES UNITY_BUILD OFF)
target_include_directories(tunekit_cuda_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/unit)
# The fake driver table (unit/backends/cuda/fake_driver.hpp) includes the toolkit's cuda.h.
target_include_directories(tunekit_cuda_tests SYSTEM PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
if(TUNEKIT_BUILD_TOOLS)
  target_compile_definitions(tunekit_cuda_tests PRIVATE TUNEKIT_CLI_PATH="$<TARGET_FILE:tunekit_cli>")
  add_dependencies(tunekit_cuda_tests tunekit_cli)
  # The skip path: with every device hidden from the driver (its own CUDA_VISIBLE_DEVICES) a GPU
  # test must report SKIPPED, not pass, not fail, on a machine with or without a GPU.
  add_test(NAME cuda_gpu_tests_skip_without_device
           COMMAND tunekit_cuda_tests --gtest_filter=CudaGpu.TuneSgemmAtAnOddShapeOnTheDevice)
  set_tests_properties(cuda_gpu_tests_skip_without_device PROPERTIES
                       ENVIRONMENT "CUDA_VISIBLE_DEVICES=-1"
                       PASS_REGULAR_EXPRESSION "\\[  SKIPPED \\] 1 test"
                       LABELS tunekit_cuda_tests)
endif()
