# Install rules (included by the top-level CMakeLists.txt): `cmake --install BUILD --prefix P`
# or `make install PREFIX=P`. What goes where, under P:
#   bin/spoor                                  the command-line tool
#   lib/libspoor.a, lib/libspoor.so.*          libspoor (GNUInstallDirs' libdir)
#   include/spoor/*.h                          the public API only (src/lib/*.h stay inside)
#   lib/pkgconfig/spoor.pc                     pkg-config: libspoor (shared by default)
#   lib/cmake/spoor/                           find_package(spoor): spoor::spoor, spoor::shared
#   share/man/man1/spoor.1                     the man page (docs/spoor.1)
#   share/bash-completion/completions/spoor    bash completion (share/bash-completion/spoor)
#   share/spoor/target/{src,include}           the target library as sources, for firmware
#   share/spoor/spoor-target.mk                ... built by Make (SPOOR_TARGET_SRCS/_INC)
#   share/spoor/spoor-target.cmake             ... built by CMake (spoor_target_add())
#   share/spoor/spoor-sections.ld              the linker-script lines the target library needs
#   share/spoor/arm-none-eabi.cmake            a CMake toolchain file (Debian's gcc-arm-none-eabi)
# docs/integrating.md shows how a firmware uses the share/spoor part.
include(CMakePackageConfigHelpers)

set(SPOOR_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/spoor)
set(SPOOR_SHARE_DIR ${CMAKE_INSTALL_DATADIR}/spoor)

install(TARGETS spoor_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS spoor spoor_shared EXPORT spoorTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/spoor DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
# the dump layout the public headers (spoor/dump.h, spoor/fault.h) build on, and the Cortex-M
# facts of spoor/calls_decode.h and spoor/mtb_decode.h (EXC_RETURN) with the attribute macro
# their inline functions carry (spoor/no_instrument.h)
install(FILES ${PROJECT_SOURCE_DIR}/target/include/spoor/dump_format.h
              ${PROJECT_SOURCE_DIR}/target/include/spoor/cortexm_facts.h
              ${PROJECT_SOURCE_DIR}/target/include/spoor/no_instrument.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/spoor)

# pkg-config: the prefix is written when installing, so that `cmake --install --prefix P` gives
# a file that names P whatever prefix the build was configured with.
set(SPOOR_PC_LIBS_EXTRA "")
if(SPOOR_SANITIZE) # a program linking an instrumented libspoor needs the sanitizer runtimes
  set(SPOOR_PC_LIBS_EXTRA " -fsanitize=address,undefined")
endif()
set(SPOOR_PC_PREFIX "@SPOOR_PC_PREFIX@") # kept for the second pass, at install time
configure_file(${PROJECT_SOURCE_DIR}/cmake/spoor.pc.in ${PROJECT_BINARY_DIR}/spoor.pc.in @ONLY)
install(CODE "set(SPOOR_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  configure_file(\"${PROJECT_BINARY_DIR}/spoor.pc.in\" \"${PROJECT_BINARY_DIR}/spoor.pc\" @ONLY)")
install(FILES ${PROJECT_BINARY_DIR}/spoor.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# CMake package
install(EXPORT spoorTargets NAMESPACE spoor:: DESTINATION ${SPOOR_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/spoorConfig.cmake.in
  ${PROJECT_BINARY_DIR}/spoorConfig.cmake INSTALL_DESTINATION ${SPOOR_CMAKE_DIR}
  PATH_VARS SPOOR_SHARE_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/spoorConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/spoorConfig.cmake ${PROJECT_BINARY_DIR}/spoorConfigVersion.cmake
  DESTINATION ${SPOOR_CMAKE_DIR})

install(FILES ${PROJECT_SOURCE_DIR}/docs/spoor.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_SOURCE_DIR}/share/bash-completion/spoor
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)

# The target library as sources plus the Make fragment, the CMake helper and the linker lines.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/target/src ${PROJECT_SOURCE_DIR}/target/include
  DESTINATION ${SPOOR_SHARE_DIR}/target
  FILES_MATCHING PATTERN "*.c" PATTERN "*.h" PATTERN "*.S")
install(FILES ${PROJECT_SOURCE_DIR}/target/spoor-target.mk
              ${PROJECT_SOURCE_DIR}/target/spoor-target.cmake
              ${PROJECT_SOURCE_DIR}/target/spoor-sections.ld
              # a toolchain file for Debian's gcc-arm-none-eabi, for a firmware that has none
              ${PROJECT_SOURCE_DIR}/cmake/arm-none-eabi.cmake
  DESTINATION ${SPOOR_SHARE_DIR})

# The virtual trace probe (docs/vprobe.md): `spoor vprobe` runs tools/vprobe.py with python3. It
# is installed with the modules it imports under share/spoor/tools; spoor finds it there relative
# to its own executable (so an installed tree can be moved), else in the source tree it was
# built from.
set(SPOOR_TOOLS_DIR ${SPOOR_SHARE_DIR}/tools)
file(RELATIVE_PATH SPOOR_TOOLS_RELATIVE ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}
     ${CMAKE_INSTALL_PREFIX}/${SPOOR_TOOLS_DIR})
target_compile_definitions(spoor_cli PRIVATE SPOOR_TOOLS_RELATIVE="${SPOOR_TOOLS_RELATIVE}"
                                             SPOOR_TOOLS_SOURCE_DIR="${PROJECT_SOURCE_DIR}/tools")
install(FILES ${PROJECT_SOURCE_DIR}/tools/vprobe.py ${PROJECT_SOURCE_DIR}/tools/vprobe_itm.py
              ${PROJECT_SOURCE_DIR}/tools/vprobe_stores.py ${PROJECT_SOURCE_DIR}/tools/qemu_log.py
              ${PROJECT_SOURCE_DIR}/tools/vprobe_gdb_proxy.py ${PROJECT_SOURCE_DIR}/tools/coresight_regs.py
              ${PROJECT_SOURCE_DIR}/tools/rsp_framing.py
  DESTINATION ${SPOOR_TOOLS_DIR})
