// C++ producer for the symbolizer's differential test (tests/e2e/test_sym_producers.py):
// classes, namespaces, templates, overloads, inlined members, a static member, an anonymous
// namespace and an operator. Freestanding: no exceptions, no RTTI, no C++ library (newlib's
// memcpy and qsort, without DWARF, are named by the symbol table). It is linked for the
// mps2-an385 memory map but is never run.
#include <stddef.h>
#include <stdint.h>

// newlib's, declared here: clang has no arm-none-eabi C library headers of its own
extern "C" {
void qsort(void *base, size_t n, size_t size, int (*compare)(const void *, const void *));
void *memcpy(void *dst, const void *src, size_t n);
}

namespace sensor {

class Accelerometer {
public:
    explicit Accelerometer(uint8_t address) : address_(address), reads_(0) {}
    uint8_t I2C_RegisterRead(uint8_t reg);
    uint8_t I2C_RegisterRead(uint8_t reg, uint8_t mask); // an overload
    inline int axis(int n) const { return (n * 3 + address_) ^ reads_; }
    static int instances;

private:
    volatile uint8_t address_;
    uint32_t reads_;
};

int Accelerometer::instances;

volatile uint8_t bus[256];

__attribute__((noinline)) uint8_t Accelerometer::I2C_RegisterRead(uint8_t reg)
{
    reads_++;
    return bus[(uint8_t)(reg + address_)];
}

__attribute__((noinline)) uint8_t Accelerometer::I2C_RegisterRead(uint8_t reg, uint8_t mask)
{
    return I2C_RegisterRead(reg) & mask;
}

} // namespace sensor

namespace util {

template <typename T, int N> struct Ring {
    T items[N];
    int head = 0;
    __attribute__((noinline)) void push(T v)
    {
        items[head] = v;
        head = (head + 1) % N;
    }
    inline T sum() const
    {
        T s = 0;
        for (int i = 0; i < N; i++)
            s += items[i];
        return s;
    }
};

template <typename T> __attribute__((noinline)) T clamp(T v, T lo, T hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

struct Vec {
    int x, y;
};

__attribute__((noinline)) Vec operator+(Vec a, Vec b)
{
    return Vec{a.x + b.x, a.y + b.y};
}

} // namespace util

namespace dsp {

// One class template instantiated for many element types and sizes: many functions whose
// names differ only in template arguments.
template <typename T, unsigned N> class Filter {
public:
    __attribute__((noinline)) void feed(T v)
    {
        taps_[pos_] = v;
        pos_ = (pos_ + 1) % N;
    }
    __attribute__((noinline)) T average() const { return total() / (T)N; }
    __attribute__((noinline)) void reset(T v)
    {
        for (unsigned i = 0; i < N; i++)
            taps_[i] = v;
    }
    __attribute__((noinline)) void sort()
    {
        qsort(taps_, N, sizeof(T), [](const void *a, const void *b) {
            T x = *(const T *)a, y = *(const T *)b;
            return (x > y) - (x < y);
        });
    }

private:
    inline T total() const
    {
        T s = 0;
        for (unsigned i = 0; i < N; i++)
            s += taps_[i];
        return s;
    }
    T taps_[N] = {};
    unsigned pos_ = 0;
};

template <typename T, unsigned N> __attribute__((noinline)) T run_filter(Filter<T, N> &f, T seed)
{
    f.reset(seed);
    for (unsigned i = 0; i < 2 * N; i++)
        f.feed((T)(seed + (T)i));
    f.sort();
    return f.average();
}

} // namespace dsp

namespace {
__attribute__((noinline)) int hidden_helper(int v)
{
    return v * 7 + 1;
}
} // namespace

extern "C" __attribute__((noinline)) int c_linkage(int v)
{
    return v + 3;
}

__attribute__((noinline)) void showVersion()
{
    sensor::bus[0] = 1;
}

__attribute__((noinline)) void showVersion(int major)
{
    sensor::bus[0] = (uint8_t)major;
}

static dsp::Filter<int8_t, 4> f_i8;
static dsp::Filter<int16_t, 8> f_i16;
static dsp::Filter<int32_t, 4> f_i32;
static dsp::Filter<int32_t, 16> f_i32_16;
static dsp::Filter<uint32_t, 8> f_u32;
static dsp::Filter<int64_t, 4> f_i64;
static dsp::Filter<uint64_t, 2> f_u64;

__attribute__((noinline)) long filters(int seed)
{
    char scratch[16];
    memcpy(scratch, (const void *)sensor::bus, sizeof scratch);
    return dsp::run_filter(f_i8, (int8_t)seed) + dsp::run_filter(f_i16, (int16_t)scratch[1]) +
           dsp::run_filter(f_i32, (int32_t)seed) + dsp::run_filter(f_i32_16, (int32_t)seed * 2) +
           (long)dsp::run_filter(f_u32, (uint32_t)seed) +
           (long)dsp::run_filter(f_i64, (int64_t)seed) +
           (long)dsp::run_filter(f_u64, (uint64_t)seed);
}

static util::Ring<int, 8> ring_i;
static util::Ring<short, 4> ring_s;

__attribute__((noinline)) int work(int n)
{
    sensor::Accelerometer acc(0x1d);
    int total = 0;
    for (int i = 0; i < n; i++) {
        total += acc.I2C_RegisterRead((uint8_t)i, 0x7f);
        total += acc.axis(i); // inlined member
        ring_i.push(total);
        ring_s.push((short)i);
        total += ring_i.sum() + ring_s.sum(); // inlined template members
        total = util::clamp(total, -1000, 1000) + util::clamp<short>((short)i, 0, 9);
        util::Vec v = util::Vec{i, total} + util::Vec{1, 2};
        total += v.x + hidden_helper(v.y) + c_linkage(i);
    }
    showVersion();
    showVersion(n);
    total += (int)filters(total);
    sensor::Accelerometer::instances++;
    return total;
}

extern "C" void Reset_Handler(void)
{
    for (;;)
        work(sensor::bus[1]);
}

extern "C" __attribute__((section(".vectors"), used)) void (*const vectors[])(void) = {
    (void (*)(void))0x20008000, Reset_Handler};
