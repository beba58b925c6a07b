# gcsprof_guest_test(NAME name KERNELS project reference [CPU model] [EL2]
#                    [APPEND args] [TIMEOUT s] COMMAND cmd args...)
#
# Registers one CTest test per kernel: "<name>.<kernel>", which boots that
# kernel in QEMU through vm/run and runs COMMAND in the guest (programs
# staged in this build are under /opt/gcsprof). Labelled "guest" and
# "kernel:<kernel>". Exit status 4 (TAP skip) counts as skipped. EL2 boots
# the kernel at EL2 (QEMU's virtualization=on).
function(gcsprof_guest_test)
  cmake_parse_arguments(GT "EL2" "NAME;CPU;APPEND;TIMEOUT" "KERNELS;COMMAND" ${ARGN})
  if(NOT GT_TIMEOUT)
    set(GT_TIMEOUT 300)
  endif()
  set(extra)
  if(GT_CPU)
    list(APPEND extra --cpu ${GT_CPU})
  endif()
  if(GT_EL2)
    list(APPEND extra --el2)
  endif()
  if(GT_APPEND)
    list(APPEND extra --append ${GT_APPEND})
  endif()
  foreach(kernel IN LISTS GT_KERNELS)
    set(test ${GT_NAME}.${kernel})
    add_test(NAME ${test}
      COMMAND ${GCSPROF_VM_RUN} --kernel ${kernel} ${extra} --timeout ${GT_TIMEOUT}
              --stage ${GCSPROF_STAGE} -- ${GT_COMMAND})
    math(EXPR ctest_timeout "${GT_TIMEOUT} + 60")
    set_tests_properties(${test} PROPERTIES
      LABELS "guest;kernel:${kernel}"
      SKIP_RETURN_CODE 4
      TIMEOUT ${ctest_timeout})
  endforeach()
endfunction()
