// Package pyrand is CPython's random.Random, reproduced draw for draw.
//
// lm-eval's bootstrap standard errors resample with random.Random(i).choices,
// so re-scoring them bit for bit needs the very same stream of indices: the
// MT19937 generator of Modules/_randommodule.c, seeded the way CPython seeds
// it from an int, and the float and index arithmetic of Lib/random.py.
//
// # Seeding
//
// For an int seed CPython takes abs(seed), splits it into 32-bit words,
// least significant first, and feeds them to MT19937's init_by_array; the
// seed 0 becomes the one-word key [0]. Seeds of either sign with the same
// magnitude therefore give the same stream. [Random.Seed] takes an int64,
// which covers every seed lm-eval uses (the chunk numbers 0, 1, 2, ...).
//
// # Floats and choices
//
// [Random.Random] is random_random: 53 bits from two 32-bit outputs,
// (a*2^26 + b) / 2^53 with a = out>>5 and b = out>>6.
//
// [Random.Choices] is the unweighted branch of random.choices, which picks
// population[floor(random() * n)] once per draw. Lib/random.py has spelled
// that three ways since choices appeared:
//
//   - 3.6: int(random() * n), n the int len(population);
//   - 3.7 and 3.8: n += 0.0 first, then int(random() * n);
//   - 3.9 to 3.14: n += 0.0, then floor(random() * n).
//
// They pick the same index: an int below 2^53 converts to the same double
// whether Python converts it in float.__mul__ or in n += 0.0, the product is
// never negative, so int() (truncation) and math.floor agree, and the
// product stays below n (random() is at most 1-2^-53, and n(1-2^-53) rounds
// to a double below n for every n up to 2^53). Each index consumes exactly
// one random(), that is two 32-bit outputs.
//
// A Random is not safe for concurrent use; give each goroutine its own.
package pyrand
