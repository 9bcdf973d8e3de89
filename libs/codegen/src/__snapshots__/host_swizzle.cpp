// tilekit codegen sample: host index math

#include <cstdio>

constexpr int kRowLength = 64;

namespace tk {

inline __attribute__((always_inline)) int swizzle(int row, int col) {
  // XOR the 8-element chunk index with the row (an LDS-style swizzle)
  const int chunk = col >> 3;
  const int within = col & 7;
  const int sw = chunk ^ (row & 7);
  return row * kRowLength + sw * 8 + within;
}

}  // namespace tk

int main() {
  int total = 0;
  for (int r = 0; r < 4; ++r) {
    #pragma GCC unroll 2
    for (int c = 0; c < 64; c += 8) {
      total += tk::swizzle(r, c);
    }
  }
  std::printf("%d\n", total);
  return 0;
}
