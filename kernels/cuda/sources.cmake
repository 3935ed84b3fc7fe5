# The built-in CUDA ops (included by kernels/CMakeLists.txt when TUNEKIT_CUDA is on).
