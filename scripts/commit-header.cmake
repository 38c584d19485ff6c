# commit-header.cmake - writes OUT, a header defining LOCKLAB_COMMIT as the
# source tree's git commit (`git describe --always --dirty`), or "unknown"
# outside a git checkout. Run at every build (CMakeLists.txt, target
# locklab_commit); the file is rewritten only when the commit changed, so
# only what includes it is rebuilt. summary.json and report.html carry it.
execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=12
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
endif()
set(text "#define LOCKLAB_COMMIT \"${commit}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
