// SPDX-License-Identifier: MIT
// C++ names for the demangling tests: a namespace, a class template
// method, overloads.
#define NOINLINE __attribute__((noinline, used))

volatile int cxx_sink;

namespace spulse_ns {
template <typename T> struct Box {
	T v;
	NOINLINE T get(int k) const { return v + (T)k + (T)cxx_sink; }
};

NOINLINE int over(int x) { return x + cxx_sink; }
NOINLINE double over(double x) { return x * 2 + cxx_sink; }
} // namespace spulse_ns

template struct spulse_ns::Box<int>;

int main(int argc, char **)
{
	spulse_ns::Box<int> b{argc};
	return b.get(1) + spulse_ns::over(argc) + (int)spulse_ns::over(1.5);
}
