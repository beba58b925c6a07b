// SPDX-License-Identifier: MIT
/*
 * Healthy: a C++ exception thrown five calls down is in flight when the
 * destructor of an object in the third frame, run by the unwinder,
 * abort()s. The unwinder has moved the stack (and the GCS) to that frame:
 * no corruption claimed.
 */
#include <cstdlib>
#include <stdexcept>

#define NOINLINE __attribute__((noinline))
#define KEEP() __asm__ volatile("" ::: "memory")

struct AbortOnUnwind {
	~AbortOnUnwind() { std::abort(); }
};

volatile int sink;

NOINLINE void thrower(int x) { if (x > 0) throw std::runtime_error("in flight"); sink = x; }
NOINLINE void pass2(int x) { thrower(x + 1); KEEP(); }
NOINLINE void guarded(int x) { AbortOnUnwind guard; pass2(x + 1); KEEP(); }
NOINLINE void pass1(int x) { guarded(x + 1); KEEP(); }

int main()
{
	try {
		pass1(1);
	} catch (const std::exception &) {
		return 1;
	}
	return 0;
}
