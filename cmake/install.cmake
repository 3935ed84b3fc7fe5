# cmake --install: the public headers, the library, the CLI, a CMake package
# (find_package(tunekit 0.2) -> tunekit::tunekit, and tunekit::kernels for the built-in ops) and a
# pkg-config file (tunekit.pc).
# Both package files are relocatable: `cmake --install build --prefix DIR` works for any DIR.
include(CMakePackageConfigHelpers)

set(TUNEKIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tunekit)
set_target_properties(tunekit_lib PROPERTIES EXPORT_NAME tunekit VERSION ${PROJECT_VERSION}
                                             SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tunekit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp")
install(TARGETS tunekit_lib EXPORT tunekitTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The built-in ops (tunekit::kernels, libtunekit_kernels.a): what the catalog headers
# (tunekit/catalog.hpp, opencl_catalog.hpp, stack_catalog.hpp, installed above) declare. Static
# and position-independent, so it links into programs and into shared objects (the Python
# extension).
set_target_properties(tunekit_kernels PROPERTIES EXPORT_NAME kernels)
install(TARGETS tunekit_kernels EXPORT tunekitTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET tunekit_cli)
  # A shared libtunekit is found beside the installed tool, wherever the prefix is.
  set_target_properties(tunekit_cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
  install(TARGETS tunekit_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT tunekitTargets NAMESPACE tunekit:: FILE tunekitTargets.cmake
        DESTINATION ${TUNEKIT_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tunekitConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tunekitConfig.cmake
                              INSTALL_DESTINATION ${TUNEKIT_CMAKE_DIR})
# 0.x: a minor version may break the API, so 0.2 accepts 0.2.* only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tunekitConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tunekitConfig.cmake
              ${PROJECT_BINARY_DIR}/tunekitConfigVersion.cmake
        DESTINATION ${TUNEKIT_CMAKE_DIR})

# tunekit.pc finds its prefix from its own place (lib/pkgconfig -> ../..).
file(RELATIVE_PATH TUNEKIT_PC_TO_PREFIX /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
string(REGEX REPLACE "/$" "" TUNEKIT_PC_TO_PREFIX "${TUNEKIT_PC_TO_PREFIX}")
# A static libtunekit needs its dependencies on every link (Requires); a shared one only when
# the consumer itself links statically (Requires.private).
if(TUNEKIT_SHARED)
  set(TUNEKIT_PC_REQUIRES Requires.private)
else()
  set(TUNEKIT_PC_REQUIRES Requires)
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/tunekit.pc.in ${PROJECT_BINARY_DIR}/tunekit.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tunekit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
