# The CUDA backend's sources (included by src/CMakeLists.txt when TUNEKIT_CUDA is on): every
# .cpp of this folder but the stand-in used without the toolkit.
file(GLOB TUNEKIT_CUDA_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
list(FILTER TUNEKIT_CUDA_SOURCES EXCLUDE REGEX "/cuda_unavailable\\.cpp$")
