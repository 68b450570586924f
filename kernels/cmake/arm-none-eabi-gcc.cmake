# CMake toolchain file: bare-metal Arm Cortex-M with the GNU Arm toolchain (arm-none-eabi-gcc + newlib).
#
# Usage: cmake -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi-gcc.cmake -DCMLENS_BOARD=mps3-an547 ...
# Set CMLENS_TOOLCHAIN_PREFIX (or the environment variable ARM_NONE_EABI_PREFIX) to a directory such as
# /opt/arm-gnu-toolchain/bin/ when the compiler is not on PATH.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

if(NOT DEFINED CMLENS_TOOLCHAIN_PREFIX AND DEFINED ENV{ARM_NONE_EABI_PREFIX})
  set(CMLENS_TOOLCHAIN_PREFIX "$ENV{ARM_NONE_EABI_PREFIX}")
endif()
if(DEFINED CMLENS_TOOLCHAIN_PREFIX AND NOT CMLENS_TOOLCHAIN_PREFIX STREQUAL "")
  set(_cmlens_prefix "${CMLENS_TOOLCHAIN_PREFIX}/arm-none-eabi-")
else()
  set(_cmlens_prefix "arm-none-eabi-")
endif()
# Forward the prefix into try_compile projects.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES CMLENS_TOOLCHAIN_PREFIX)

set(CMAKE_C_COMPILER "${_cmlens_prefix}gcc")
set(CMAKE_CXX_COMPILER "${_cmlens_prefix}g++")
set(CMAKE_ASM_COMPILER "${_cmlens_prefix}gcc")
set(CMAKE_OBJCOPY "${_cmlens_prefix}objcopy" CACHE FILEPATH "objcopy")
set(CMAKE_SIZE "${_cmlens_prefix}size" CACHE FILEPATH "size")

# There is no OS to link a test executable against during compiler checks.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
