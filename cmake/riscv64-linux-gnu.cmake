# Cross toolchain for the riscv64 guest, used inside the build-riscv64
# chroot (scripts/riscv64-chroot): sid's gcc-riscv64-linux-gnu 16 with
# riscv64 libraries from multiarch packages (libdw-dev:riscv64 and friends).
# The library and the tools are built for plain rv64gc, as Debian builds
# riscv64 (no Zimop encodings, which CPUs without it would refuse); the
# test programs add Zicfiss and Zicfilp themselves (GCSPROF_RISCV_CFI_FLAGS).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR riscv64)
set(CMAKE_C_COMPILER riscv64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER riscv64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE riscv64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/riscv64-linux-gnu /usr/lib/riscv64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/riscv64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
