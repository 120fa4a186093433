# ctest `package_example`: install this build into a scratch prefix, build examples/package
# against it with find_package(gemmgen), and run the programs (the example writes a .cu; with a
# GPU both run their kernel against cuBLAS; without one, or without a driver, they say so and
# exit 0).
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DGENERATOR=... -P cmake/package_test.cmake
set(work ${BUILD_DIR}/package_test)
file(REMOVE_RECURSE ${work})

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "package test: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

# The README's C++ usage program must compile as written: the first ```cpp block after the heading.
file(READ ${SOURCE_DIR}/README.md readme)
string(FIND "${readme}" "## C++ usage" at)
string(SUBSTRING "${readme}" ${at} -1 readme)
string(FIND "${readme}" "```cpp\n" begin)
string(FIND "${readme}" "\n```\n" end)
if(at EQUAL -1 OR begin EQUAL -1 OR end LESS begin)
  message(FATAL_ERROR "package test: README.md has no ```cpp block under '## C++ usage'")
endif()
math(EXPR begin "${begin} + 7")
math(EXPR length "${end} - ${begin} + 1")
string(SUBSTRING "${readme}" ${begin} ${length} program)
file(WRITE ${work}/readme_program.cpp "${program}")

run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${work}/prefix)
run("configuring examples/package" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/package -B ${work}/build
    -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${work}/prefix -DCMAKE_BUILD_TYPE=Release
    -DREADME_PROGRAM=${work}/readme_program.cpp)
run("building examples/package" ${CMAKE_COMMAND} --build ${work}/build)
run("running the example" ${work}/build/gemm_bias_relu ${work}/out.cu)
message("${last_output}")
# The README's program handles the errors it documents: no GPU is a message, not an abort.
run("running the README's program" ${work}/build/readme_program)
string(FIND "${last_output}" "no GPU: not run" not_run)
string(FIND "${last_output}" "cuBLAS" checked)
if(not_run EQUAL -1 AND checked EQUAL -1)
  message(FATAL_ERROR "package test: the README's program neither ran its check nor said why not:\n${last_output}")
endif()
file(READ ${work}/out.cu source)
string(FIND "${source}" "extern \"C\" __global__" at)
if(at EQUAL -1)
  message(FATAL_ERROR "package test: ${work}/out.cu holds no kernel")
endif()
foreach(path bin/gemmgen include/gemmgen/dsl/schedule.h include/gemmgen/codegen/emit.h lib/cmake/gemmgen/gemmgenConfig.cmake)
  if(NOT EXISTS ${work}/prefix/${path})
    message(FATAL_ERROR "package test: the install has no ${path}")
  endif()
endforeach()
