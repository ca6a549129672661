# Every source file of the workloads' folders, by the module that compiles it: a workload's part
# in a layer (workloads/layers.h) is compiled with that layer's module, and the table's side in
# each layer (composition.cpp, plan_calls.cpp, records.cpp, sources.cpp, sections.cpp) with it; a tool of the
# command line (a trace's synthesis) with cli. Each file is listed once, and the configure step
# fails on a .cpp file here that no list names. scripts/check-unity-names.py reads these lists.
set(KVBENCH_WORKLOAD_FILES_scenario
    composition.cpp
    sweep/parse.cpp
    conversation/parse.cpp
    trace/parse.cpp trace/parse_reuse.cpp trace/parse_select.cpp trace/parse_trace.cpp
    trace/parse_weka.cpp)
set(KVBENCH_WORKLOAD_FILES_plan
    plan_calls.cpp
    sweep/plan.cpp
    conversation/plan.cpp
    trace/plan.cpp)
set(KVBENCH_WORKLOAD_FILES_results
    records.cpp
    sweep/record.cpp
    conversation/record.cpp
    trace/record.cpp)
set(KVBENCH_WORKLOAD_FILES_run
    sources.cpp
    sweep/source.cpp
    conversation/source.cpp conversation/source_turns.cpp
    trace/source.cpp trace/source_policy.cpp trace/source_prompt.cpp)
set(KVBENCH_WORKLOAD_FILES_report
    sections.cpp
    sweep/report.cpp
    conversation/report.cpp conversation/report_rows.cpp conversation/report_section.cpp
    trace/report.cpp trace/report_trace.cpp trace/report_trace_section.cpp)
set(KVBENCH_WORKLOAD_FILES_cli
    trace/synth.cpp)
set(KVBENCH_WORKLOAD_MODULES scenario plan results run report cli)

set(listed)
foreach(module IN LISTS KVBENCH_WORKLOAD_MODULES)
  foreach(f IN LISTS KVBENCH_WORKLOAD_FILES_${module})
    list(APPEND listed ${CMAKE_CURRENT_LIST_DIR}/${f})
  endforeach()
endforeach()
file(GLOB_RECURSE found CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cpp)
foreach(f IN LISTS found)
  if(NOT f IN_LIST listed)
    message(FATAL_ERROR "${f}: a workload's file that no module compiles: name it in "
                        "harness/workloads/files.cmake")
  endif()
endforeach()

# The workloads' files `module` compiles, as paths, in `out`.
function(kvbench_workload_sources out module)
  set(paths)
  foreach(f IN LISTS KVBENCH_WORKLOAD_FILES_${module})
    list(APPEND paths ${CMAKE_SOURCE_DIR}/harness/workloads/${f})
  endforeach()
  set(${out} ${paths} PARENT_SCOPE)
endfunction()
