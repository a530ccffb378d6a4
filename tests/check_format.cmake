# Fails when a C++ file under app/, core/, ui/ or tests/ is not formatted as .clang-format says.
# Run by CTest as `cmake -DCLANG_FORMAT=... -DSOURCE_DIR=... -P check_format.cmake`.
file(GLOB_RECURSE files ${SOURCE_DIR}/app/*.cpp ${SOURCE_DIR}/app/*.h ${SOURCE_DIR}/core/*.cpp ${SOURCE_DIR}/core/*.h
     ${SOURCE_DIR}/ui/*.cpp ${SOURCE_DIR}/ui/*.h ${SOURCE_DIR}/tests/*.cpp ${SOURCE_DIR}/tests/*.h)
list(LENGTH files count)
if(count LESS 50)
    message(FATAL_ERROR "found only ${count} source files under ${SOURCE_DIR}")
endif()
execute_process(COMMAND ${CLANG_FORMAT} --dry-run --Werror --style=file ${files}
                WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE rc ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
    string(SUBSTRING "${out}" 0 3000 head)
    message(FATAL_ERROR "files not formatted (run: clang-format -i on them):\n${head}")
endif()
message(STATUS "${count} files formatted")
