# The board layer as an OBJECT library `cmlens_board`: startup + vector table, UART, semihosting, newlib
# syscalls, fault handler, cycle counter, plus the compile/link options every firmware on the board needs.
# An OBJECT library (not a static archive) so the vector table and the newlib syscalls are always linked.
#
# Needs CMLENS_BOARD set; include()-able from another project (e.g. a build of ExecuTorch's
# arm_executor_runner.cpp) with CMLENS_KERNELS_DIR pointing at kernels/.
if(NOT DEFINED CMLENS_KERNELS_DIR)
  get_filename_component(CMLENS_KERNELS_DIR "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
endif()
include(${CMLENS_KERNELS_DIR}/cmake/boards.cmake)

# The CPU/FPU/float-ABI flags for EVERY target of the including directory, not only those that link
# cmlens_board: a library that does not link it (ExecuTorch's gen_operators_lib() in runner/CMakeLists.txt)
# was otherwise compiled for the compiler's default (soft-float Armv4T) and the link failed with
# "... does not use VFP register arguments". Set before any target exists (COMPILE_OPTIONS initialises
# the targets created after it). backend_core/target/runner_build.py also passes them as CMAKE_<LANG>_FLAGS.
add_compile_options(${CMLENS_CPU_FLAGS})

option(CMLENS_SEMIHOSTING "Exit (and host file I/O) through semihosting" ON)
option(CMLENS_SEMIHOSTING_ARGS "Pass the semihosting command line to main(argc, argv)" OFF)
option(CMLENS_NEWLIB_NANO "Link newlib-nano (with float printf)" ON)

add_library(cmlens_board OBJECT
  ${CMLENS_KERNELS_DIR}/common/startup.c
  ${CMLENS_KERNELS_DIR}/common/fault.c
  ${CMLENS_KERNELS_DIR}/common/uart_cmsdk.c
  ${CMLENS_KERNELS_DIR}/common/semihost.c
  ${CMLENS_KERNELS_DIR}/common/syscalls.c
  ${CMLENS_KERNELS_DIR}/common/cycles.c
  ${CMLENS_KERNELS_DIR}/${CMLENS_BOARD_SOURCE}
)
target_include_directories(cmlens_board PUBLIC ${CMLENS_KERNELS_DIR}/include)
target_compile_options(cmlens_board PUBLIC ${CMLENS_CPU_FLAGS} -ffunction-sections -fdata-sections)
target_compile_options(cmlens_board PRIVATE -Wall -Wextra)
if(NOT CMLENS_SEMIHOSTING)
  target_compile_definitions(cmlens_board PRIVATE CMLENS_NO_SEMIHOSTING)
endif()
if(CMLENS_SEMIHOSTING_ARGS)
  target_compile_definitions(cmlens_board PRIVATE CMLENS_SEMIHOSTING_ARGS)
endif()

set(_cmlens_ld "${CMLENS_KERNELS_DIR}/${CMLENS_LINKER_SCRIPT}")
target_link_options(cmlens_board PUBLIC
  ${CMLENS_CPU_FLAGS}
  -nostartfiles
  -T${_cmlens_ld}
  -L${CMLENS_KERNELS_DIR}/linker
  -Wl,--gc-sections
)
if(CMLENS_NEWLIB_NANO)
  target_link_options(cmlens_board PUBLIC --specs=nano.specs -u _printf_float)
endif()
set_property(TARGET cmlens_board APPEND PROPERTY INTERFACE_LINK_DEPENDS ${_cmlens_ld}
  ${CMLENS_KERNELS_DIR}/linker/cmlens_sections.ld)

# cmlens_add_firmware(<target> SOURCES ...): an .elf linked against the board layer, with a map file.
function(cmlens_add_firmware name)
  cmake_parse_arguments(FW "" "" "SOURCES;DEFINITIONS" ${ARGN})
  add_executable(${name} ${FW_SOURCES})
  set_target_properties(${name} PROPERTIES SUFFIX ".elf")
  target_link_libraries(${name} PRIVATE cmlens_board)
  target_compile_options(${name} PRIVATE -Wall -Wextra)
  if(FW_DEFINITIONS)
    target_compile_definitions(${name} PRIVATE ${FW_DEFINITIONS})
  endif()
  target_link_options(${name} PRIVATE -Wl,-Map=$<TARGET_FILE_DIR:${name}>/${name}.map)
  if(CMAKE_SIZE)
    add_custom_command(TARGET ${name} POST_BUILD COMMAND ${CMAKE_SIZE} $<TARGET_FILE:${name}> VERBATIM)
  endif()
endfunction()
