# spoor's target library in a CMake firmware build (cross build, arm-none-eabi-gcc).
#
#   include(<prefix>/share/spoor/spoor-target.cmake)
#   spoor_target_add(spoor_target CPU m4f)
#   target_link_libraries(firmware PRIVATE spoor_target)
#
# spoor_target_add(<name> CPU <cpu>) adds the static library <name>, compiled from spoor's
# target sources (the portable ones and the Cortex-M port) as C99 with GNU extensions,
# -ffunction-sections -fdata-sections -ffreestanding -fno-instrument-functions (the library is
# never instrumented, whatever the firmware's CMAKE_C_FLAGS say). <cpu> picks the core flags; they are
# PUBLIC (compile and link), so the firmware that links <name> is built for the same core
# and float ABI:
#   m0, m0plus  -mcpu=cortex-m0 / cortex-m0plus -mthumb -mfloat-abi=soft
#   m3          -mcpu=cortex-m3 -mthumb -mfloat-abi=soft
#   m4          -mcpu=cortex-m4 -mthumb -mfloat-abi=soft
#   m4f         -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16
#   m7          -mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16
#   m33         -mcpu=cortex-m33 -mthumb -mfloat-abi=soft
#   none        no flags: the toolchain file's CMAKE_C_FLAGS (or the caller) choose the core
# The firmware also needs the linker-script lines of spoor-sections.ld (beside this file, so
# -L${SPOOR_TARGET_LD_DIR} and `INCLUDE spoor-sections.ld`) and -Wl,--build-id=sha1.
#
# After the link, `spoor check -e FIRMWARE` (docs/check.md) says whether spoor is wired (fault
# vectors, build-id, .noinit, instrumented naked handlers, ...) and fails the build when it is
# not: every executable of the directory that calls spoor_target_add and links <name> gets it as
# a POST_BUILD step, and spoor_target_check(<executable>) adds it to one elsewhere. It runs the
# installed spoor (<prefix>/bin/spoor, or SPOOR_CHECK_COMMAND); -DSPOOR_CHECK=OFF turns it off.
#
# Installed, this file sits in <prefix>/share/spoor beside the sources in target/; in spoor's
# source tree it is target/spoor-target.cmake, beside src/ and include/ (target/CMakeLists.txt
# builds spoor_target_<cpu> with it).
include_guard(GLOBAL)

# the directory of spoor-sections.ld, for -L
set(SPOOR_TARGET_LD_DIR "${CMAKE_CURRENT_LIST_DIR}")

# spoor check after each link (opt-out): the spoor installed with this file, if there is one
option(SPOOR_CHECK "run spoor check on the firmware after the link" ON)
cmake_path(SET _spoor_bin NORMALIZE "${CMAKE_CURRENT_LIST_DIR}/../../bin/spoor")
if(NOT DEFINED SPOOR_CHECK_COMMAND AND EXISTS "${_spoor_bin}")
  set(SPOOR_CHECK_COMMAND "${_spoor_bin}")
endif()

# spoor check -e <executable> as a POST_BUILD step of <executable> (a target of this directory)
function(spoor_target_check exe)
  if(SPOOR_CHECK AND SPOOR_CHECK_COMMAND)
    add_custom_command(TARGET ${exe} POST_BUILD
      COMMAND "${SPOOR_CHECK_COMMAND}" check -e "$<TARGET_FILE:${exe}>"
      COMMENT "spoor check of ${exe} (-DSPOOR_CHECK=OFF leaves it out)" VERBATIM)
  endif()
endfunction()

# At the end of the directory: spoor_target_check for each executable there that links lib.
function(_spoor_target_check_users lib)
  get_property(targets DIRECTORY PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${targets})
    get_target_property(type ${t} TYPE)
    get_target_property(libs ${t} LINK_LIBRARIES)
    if(type STREQUAL "EXECUTABLE" AND libs AND lib IN_LIST libs)
      spoor_target_check(${t})
    endif()
  endforeach()
endfunction()

function(spoor_target_add name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "CPU" "")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "spoor_target_add(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(arg_CPU STREQUAL "m0")
    set(flags -mcpu=cortex-m0 -mthumb -mfloat-abi=soft)
  elseif(arg_CPU STREQUAL "m0plus")
    set(flags -mcpu=cortex-m0plus -mthumb -mfloat-abi=soft)
  elseif(arg_CPU STREQUAL "m3")
    set(flags -mcpu=cortex-m3 -mthumb -mfloat-abi=soft)
  elseif(arg_CPU STREQUAL "m4")
    set(flags -mcpu=cortex-m4 -mthumb -mfloat-abi=soft)
  elseif(arg_CPU STREQUAL "m4f")
    set(flags -mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16)
  elseif(arg_CPU STREQUAL "m7")
    set(flags -mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16)
  elseif(arg_CPU STREQUAL "m33")
    set(flags -mcpu=cortex-m33 -mthumb -mfloat-abi=soft)
  elseif(arg_CPU STREQUAL "none")
    set(flags)
  else()
    message(FATAL_ERROR "spoor_target_add(${name} CPU ${arg_CPU}): CPU must be one of "
                        "m0 m0plus m3 m4 m4f m7 m33 none")
  endif()
  set(root "${CMAKE_CURRENT_FUNCTION_LIST_DIR}") # installed: the sources are in target/
  if(EXISTS "${root}/target/src")
    set(root "${root}/target")
  endif()
  file(GLOB sources CONFIGURE_DEPENDS "${root}/src/*.c" "${root}/src/cortexm/*.c"
       "${root}/src/cortexm/*.S")
  add_library(${name} STATIC ${sources})
  target_include_directories(${name} PUBLIC "${root}/include")
  set_target_properties(${name} PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS ON)
  # -fno-instrument-functions: the library is never instrumented, even when the firmware's
  # CMAKE_C_FLAGS trace calls (its functions are also marked SPOOR_NO_INSTRUMENT)
  target_compile_options(${name} PUBLIC ${flags}
    PRIVATE -ffunction-sections -fdata-sections -ffreestanding -fno-instrument-functions)
  target_link_options(${name} PUBLIC ${flags})
  if(SPOOR_CHECK AND SPOOR_CHECK_COMMAND)
    # (a deferred call's arguments are expanded when it runs: the name is put in now)
    cmake_language(EVAL CODE "cmake_language(DEFER CALL _spoor_target_check_users [[${name}]])")
  endif()
endfunction()
