# The board layer as an OBJECT library `cmlens_board`: startup + vector table, UART, semihosting, newlib
# syscalls, fault handler, cycle counter, SysTick tick counter, plus the compile/link options every firmware on the board needs.
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
# the targets created after it). backend_core/build/runner.py also passes them as CMAKE_<LANG>_FLAGS.
add_compile_options(${CMLENS_CPU_FLAGS})

option(CMLENS_SEMIHOSTING "Exit (and host file I/O) through semihosting" ON)
option(CMLENS_SEMIHOSTING_ARGS "Pass the semihosting command line to main(argc, argv)" OFF)
# Full newlib by default: its printf has %lld/%llu (nano's has not). Neither has the C99 %zu/%zd/%td/%jd
# that ExecuTorch's log messages use: common/printf_c99.c adds them (--wrap below).
option(CMLENS_NEWLIB_NANO "Link newlib-nano (smaller; its printf has no %lld/%llu)" OFF)

add_library(cmlens_board OBJECT
  ${CMLENS_KERNELS_DIR}/common/startup.c
  ${CMLENS_KERNELS_DIR}/common/fault.c
  ${CMLENS_KERNELS_DIR}/common/uart_cmsdk.c
  ${CMLENS_KERNELS_DIR}/common/semihost.c
  ${CMLENS_KERNELS_DIR}/common/syscalls.c
  ${CMLENS_KERNELS_DIR}/common/cycles.c
  ${CMLENS_KERNELS_DIR}/common/ticks.c
  ${CMLENS_KERNELS_DIR}/common/printf_c99.c
  ${CMLENS_KERNELS_DIR}/common/memmark.c
  ${CMLENS_KERNELS_DIR}/board/board.c
)
target_include_directories(cmlens_board PUBLIC ${CMLENS_KERNELS_DIR}/include)
target_compile_options(cmlens_board PUBLIC ${CMLENS_CPU_FLAGS} -ffunction-sections -fdata-sections)
target_compile_options(cmlens_board PRIVATE -Wall -Wextra)
target_compile_definitions(cmlens_board PRIVATE ${CMLENS_BOARD_DEFINITIONS})
if(NOT CMLENS_SEMIHOSTING)
  target_compile_definitions(cmlens_board PRIVATE CMLENS_NO_SEMIHOSTING)
endif()
if(CMLENS_SEMIHOSTING_ARGS)
  target_compile_definitions(cmlens_board PRIVATE CMLENS_SEMIHOSTING_ARGS)
endif()

set(_cmlens_ld "${CMLENS_LINKER_SCRIPT}")
# --wrap: ExecuTorch's runtime calls et_pal_current_ticks()/et_pal_ticks_to_ns_multiplier() through its
# PAL table; the stock runner defines both (PMU cycle counter, 0 without a PMU). The wrap sends those
# references to the board layer's SysTick instruction counter (common/ticks.c) instead.
target_link_options(cmlens_board PUBLIC
  ${CMLENS_CPU_FLAGS}
  -nostartfiles
  -T${_cmlens_ld}
  -L${CMLENS_KERNELS_DIR}/linker
  -Wl,--gc-sections
  -Wl,--wrap=et_pal_current_ticks
  -Wl,--wrap=et_pal_ticks_to_ns_multiplier
)
# printf family -> common/printf_c99.c (the C99 length modifiers), for the firmware and every library.
foreach(_fn printf fprintf sprintf snprintf vprintf vfprintf vsprintf vsnprintf)
  target_link_options(cmlens_board PUBLIC -Wl,--wrap=${_fn})
endforeach()
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
