# Run at every build (cmake -P): writes OUT, a header defining KVBENCH_GIT_REVISION as the git
# revision of the source folder SRC (12 hex digits, with "-dirty" when a tracked file differs
# from HEAD; "unknown" outside a git checkout). OUT is rewritten only when the revision changed,
# so a rebuild after a commit stamps new runs with the new revision and recompiles one file.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY "${SRC}"
                OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT rev)
  set(rev "unknown")
else()
  execute_process(COMMAND git update-index -q --refresh WORKING_DIRECTORY "${SRC}"
                  OUTPUT_QUIET ERROR_QUIET)
  execute_process(COMMAND git diff-index --quiet HEAD -- WORKING_DIRECTORY "${SRC}"
                  RESULT_VARIABLE changed OUTPUT_QUIET ERROR_QUIET)
  if(NOT changed EQUAL 0)
    string(APPEND rev "-dirty")
  endif()
endif()
set(text "// Written at build time by scripts/git-revision.cmake.\n#define KVBENCH_GIT_REVISION \"${rev}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
