# tests/install.cmake — `cmake --install` gives a package a program outside the tree can build
# against, with find_package(multilane) and with pkg-config (tests/install/check_install.sh).
# Needs the whole build (it installs the tool and every library). Not in the sanitizer build:
# its libraries need the ASan runtime loaded first, which the plain consumer program does not do.
if(TARGET multilane_mpi AND TARGET multilane_mpich AND NOT MULTILANE_SANITIZE)
  add_test(NAME install-package
           COMMAND ${CMAKE_SOURCE_DIR}/tests/install/check_install.sh ${CMAKE_BINARY_DIR}
                   ${CMAKE_BINARY_DIR}/install-test)
  set_tests_properties(install-package PROPERTIES TIMEOUT 300 LABELS "install;mpi"
                                                  PASS_REGULAR_EXPRESSION "install ok")
endif()
