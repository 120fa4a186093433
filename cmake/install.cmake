# `cmake --install`: static libraries, headers under include/gemmgen/, the gemmgen CLI, and a
# package config so that another project can `find_package(gemmgen)` and link gemmgen::gemmgen.
include(CMakePackageConfigHelpers)

install(TARGETS gemmgen_targets gemmgen_dsl gemmgen_runtime gemmgen_codegen gemmgen_schedules gemmgen_simulator
                gemmgen_all
        EXPORT gemmgenTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS gemmgen RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The C ABI: libgemmgen_c.so, its header as <prefix>/include/gemmgen/gemmgen.h, and the Python
# package over it under <prefix>/lib/gemmgen/python (PYTHONPATH), which finds the library two
# folders up.
install(TARGETS gemmgen_c LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/capi/gemmgen.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gemmgen)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/gemmgen DESTINATION ${CMAKE_INSTALL_LIBDIR}/gemmgen/python
        FILES_MATCHING PATTERN "*.py")
foreach(dir targets dsl runtime codegen schedules simulator)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gemmgen/${dir}
          FILES_MATCHING PATTERN "*.h" PATTERN "*.cuh")
endforeach()

set(config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/gemmgen)
install(EXPORT gemmgenTargets NAMESPACE gemmgen:: DESTINATION ${config_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/gemmgenConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/gemmgenConfig.cmake INSTALL_DESTINATION ${config_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gemmgenConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gemmgenConfig.cmake ${PROJECT_BINARY_DIR}/gemmgenConfigVersion.cmake
        DESTINATION ${config_dir})
