# bench/mpwide_programs.cmake — MPWide's own programs, unchanged, built against multilane's
# MPWide.h (run by bench/mpwide-programs.sh). Only with -DMULTILANE_MPWIDE_SRC=<a checkout of
# djgroen/MPWide>: nothing of MPWide is in this repository. The programs' sources are copied
# into the build tree next to a link named MPWide.h that points to our header, because they
# include it by a path relative to themselves ("MPWide.h", "../MPWide.h"), which would find
# MPWide's own header in the checkout first.
set(MULTILANE_MPWIDE_SRC "" CACHE PATH
    "A checkout of djgroen/MPWide whose programs to build against multilane's MPWide.h")
if(NOT MULTILANE_MPWIDE_SRC OR NOT TARGET multilane::wan)
  return()
endif()

set(mpwide_stage ${CMAKE_BINARY_DIR}/mpwide-programs/src)
file(REMOVE_RECURSE ${mpwide_stage})
file(MAKE_DIRECTORY ${mpwide_stage}/tests)
file(CREATE_LINK ${CMAKE_SOURCE_DIR}/include/multilane/mpwide/MPWide.h ${mpwide_stage}/MPWide.h
     SYMBOLIC)
# Program name (as MPWide's Makefile names it) and source, relative to the checkout.
set(mpwide_programs MPWTest=tests/Test.cpp MPWUnitTests=tests/UnitTests.cpp
    MPWTestConcurrent=tests/TestConcurrent.cpp MPWForwarder=Forwarder.cpp
    MPWFileCopy=mpw-cp.cpp MPWDataGather=DataGather.cpp)
set(mpwide_targets)
foreach(entry IN LISTS mpwide_programs ITEMS mpwide-macros.h)
  string(REPLACE "=" ";" parts ${entry})
  list(GET parts -1 source)
  if(NOT EXISTS ${MULTILANE_MPWIDE_SRC}/${source})
    message(FATAL_ERROR "MULTILANE_MPWIDE_SRC=${MULTILANE_MPWIDE_SRC} has no ${source}: "
                        "not a checkout of djgroen/MPWide?")
  endif()
  # Copied again whenever the checkout's file changes (configure_file tracks it).
  configure_file(${MULTILANE_MPWIDE_SRC}/${source} ${mpwide_stage}/${source} COPYONLY)
  list(LENGTH parts count)
  if(count EQUAL 2)
    list(GET parts 0 program)
    add_executable(${program} EXCLUDE_FROM_ALL ${mpwide_stage}/${source})
    target_link_libraries(${program} PRIVATE multilane::wan)
    # MPWide's code, compiled as it is: its warnings are not ours to fix.
    target_compile_options(${program} PRIVATE -w)
    set_target_properties(${program} PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                                                ${CMAKE_BINARY_DIR}/mpwide-programs)
    list(APPEND mpwide_targets ${program})
  endif()
endforeach()
add_custom_target(mpwide_programs DEPENDS ${mpwide_targets})
