# cmake/install.cmake — `cmake --install build --prefix P` makes an installed package:
#   P/include/multilane/        the public headers (standard library only)
#   P/lib/libmultilane.so       multilane::multilane: the C++ and C API (platform, schedule,
#                               algorithms, verify, model, sim, runtime, and the WAN layer:
#                               channels and the MPWide drop-in), one shared library
#   P/lib/libmultilane_mpi.so   multilane::mpi, the PMPI library for Open MPI; and
#   P/lib/libmultilane_mpich.so multilane::mpich, for MPICH (each when its MPI was found)
#   P/bin/multilane             the command-line tool, and multilane-probe-{openmpi,mpich}, the
#                               MPI programs of `multilane platform probe`
#   P/lib/cmake/multilane/      multilaneConfig.cmake (find_package(multilane))
#   P/lib/pkgconfig/multilane.pc
# The static libraries stay in the build tree: they would need every dependency's static
# archive at the user's link.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The shared libraries (this one and the PMPI library, src/mpi/) are linked from the static
# layers: their objects must be position independent.
set_target_properties(multilane_core multilane_runtime multilane_wan
                      PROPERTIES POSITION_INDEPENDENT_CODE ON)

# One shared library of the static layers, every object kept.
# (The target is multilane_shared: `multilane` names the command-line tool.)
add_library(multilane_shared SHARED ${CMAKE_CURRENT_LIST_DIR}/shared_library.cpp)
add_library(multilane::multilane ALIAS multilane_shared)
# (Link options, not $<LINK_LIBRARY:WHOLE_ARCHIVE>: the runtime names core again as a plain
# dependency, which CMake refuses to mix with the feature.)
target_link_options(multilane_shared PRIVATE -Wl,--whole-archive $<TARGET_FILE:multilane_wan>
                    $<TARGET_FILE:multilane_runtime> $<TARGET_FILE:multilane_core>
                    -Wl,--no-whole-archive)
target_link_libraries(multilane_shared PRIVATE multilane_wan multilane_runtime)
target_include_directories(multilane_shared
                           INTERFACE $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
                                     $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(multilane_shared PROPERTIES OUTPUT_NAME multilane EXPORT_NAME multilane
                                                  VERSION ${PROJECT_VERSION}
                                                  SOVERSION ${PROJECT_VERSION_MAJOR})

set(multilane_installed multilane_shared)
foreach(family IN ITEMS mpi mpich)
  if(TARGET multilane_${family})
    set_target_properties(multilane_${family} PROPERTIES EXPORT_NAME ${family})
    list(APPEND multilane_installed multilane_${family})
  endif()
endforeach()

install(DIRECTORY include/multilane DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ${multilane_installed} EXPORT multilaneTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS multilane RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The platform probe's MPI programs, next to `multilane`, which finds them there.
foreach(label IN ITEMS openmpi mpich)
  if(TARGET multilane-probe-${label})
    install(TARGETS multilane-probe-${label} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

set(multilane_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/multilane)
install(EXPORT multilaneTargets NAMESPACE multilane:: DESTINATION ${multilane_cmake_dir})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/multilaneConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/multilaneConfig.cmake
                              INSTALL_DESTINATION ${multilane_cmake_dir})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/multilaneConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/multilaneConfig.cmake
              ${CMAKE_BINARY_DIR}/multilaneConfigVersion.cmake
        DESTINATION ${multilane_cmake_dir})
configure_file(${CMAKE_CURRENT_LIST_DIR}/multilane.pc.in ${CMAKE_BINARY_DIR}/multilane.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/multilane.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
