# gcsprof_guest_test(NAME name KERNELS project reference [NOT_ON kernel...]
#                    [CPU model] [EL2] [VMM] [BPFTRACE] [TRINITY] [MEM size]
#                    [APPEND args] [TIMEOUT s] [LABELS l...] COMMAND cmd args...)
#
# Registers one CTest test per kernel: "<name>.<kernel>", which boots that
# kernel in QEMU through vm/run and runs COMMAND in the guest (programs
# staged in this build are under /opt/gcsprof), of this build's guest
# architecture (GCSPROF_GUEST_ARCH: vm/run --arch). Labelled "guest" and
# "kernel:<kernel>" and LABELS. Exit status 4 (TAP skip) counts as skipped.
# EL2 boots the kernel at EL2 (QEMU's virtualization=on); VMM adds sid's
# QEMU and the project kernel under /opt/vmm for a guest inside the guest
# (vm/run --vmm). BPFTRACE adds sid's bpftrace (vm/run --bpftrace),
# TRINITY sid's trinity (vm/run --trinity).
#
# Every test of the project kernel has two twins: on the debug kernel
# (kernel/build --debug: KASAN, lockdep, UBSAN, kmemleak), "<name>.debug",
# labelled "debug-kernel" too, with three times the time; and on the distro
# kernel (kernel/build --distro: the series on Debian's own config),
# "<name>.distro", labelled "distro-kernel"; and on the mainline kernel
# (kernel/build --mainline: kernel/upstream/ on sid's 7.2 with the
# reference kernel's config), "<name>.mainline", labelled
# "mainline-kernel". scripts/check leaves the three out (their kernels take
# long to build); scripts/check-debug, scripts/check-distro and
# scripts/check-mainline run them. NOT_ON leaves twins out, for a test
# whose expectation is the series' and not upstream's on a kernel whose
# code there is upstream's (the mainline kernel's KVM, say): such a test
# says why, and registers that kernel apart with upstream's expectation.
function(gcsprof_guest_test)
  cmake_parse_arguments(GT "EL2;VMM;BPFTRACE;TRINITY" "NAME;CPU;APPEND;TIMEOUT;MEM" "KERNELS;NOT_ON;COMMAND;LABELS" ${ARGN})
  if(NOT GT_TIMEOUT)
    set(GT_TIMEOUT 300)
  endif()
  set(extra)
  if(NOT GCSPROF_GUEST_ARCH STREQUAL "arm64")
    list(APPEND extra --arch ${GCSPROF_GUEST_ARCH})
  endif()
  if(GT_CPU)
    list(APPEND extra --cpu ${GT_CPU})
  endif()
  if(GT_EL2)
    list(APPEND extra --el2)
  endif()
  if(GT_VMM)
    list(APPEND extra --vmm)
  endif()
  if(GT_BPFTRACE)
    list(APPEND extra --bpftrace)
  endif()
  if(GT_TRINITY)
    list(APPEND extra --trinity)
  endif()
  if(GT_MEM)
    list(APPEND extra --mem ${GT_MEM})
  endif()
  if(GT_APPEND)
    list(APPEND extra --append ${GT_APPEND})
  endif()
  set(kernels ${GT_KERNELS})
  # A project twin brings the other kernels of the series: the debug
  # kernel on both architectures, the distro and mainline kernels on
  # arm64 (they are arm64 configurations).
  if("project" IN_LIST kernels)
    list(APPEND kernels debug)
    if(GCSPROF_GUEST_ARCH STREQUAL "arm64")
      list(APPEND kernels distro mainline)
    endif()
    if(GT_NOT_ON)
      list(REMOVE_ITEM kernels ${GT_NOT_ON})
    endif()
  endif()
  foreach(kernel IN LISTS kernels)
    set(test ${GT_NAME}.${kernel})
    set(timeout ${GT_TIMEOUT})
    set(labels "guest;kernel:${kernel};${GT_LABELS}")
    set(boot)
    set(boot_s 0)
    if(kernel STREQUAL "debug")
      # KASAN, lockdep and kmemleak make the boot alone take minutes
      # under TCG.
      math(EXPR timeout "${GT_TIMEOUT} * 3")
      list(APPEND labels debug-kernel)
      set(boot --boot-timeout 600)
      set(boot_s 600)
    elseif(kernel STREQUAL "distro")
      list(APPEND labels distro-kernel)
    elseif(kernel STREQUAL "mainline")
      list(APPEND labels mainline-kernel)
    endif()
    add_test(NAME ${test}
      COMMAND ${GCSPROF_VM_RUN} --kernel ${kernel} ${extra} ${boot} --timeout ${timeout}
              --stage ${GCSPROF_STAGE} -- ${GT_COMMAND})
    math(EXPR ctest_timeout "${timeout} + ${boot_s} + 60")
    set_tests_properties(${test} PROPERTIES
      LABELS "${labels}"
      SKIP_RETURN_CODE 4
      TIMEOUT ${ctest_timeout})
  endforeach()
endfunction()
