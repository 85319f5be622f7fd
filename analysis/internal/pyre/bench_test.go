package pyre

import (
	"strings"
	"testing"
)

// gsm8kAnswer is a chain-of-thought answer of the usual length (~600
// characters) and shape.
const gsm8kAnswer = `Let's break this down step by step.
Janet's ducks lay 16 eggs per day. She eats 3 for breakfast every morning, so 16 - 3 = 13 eggs are left.
She bakes muffins for her friends every day with 4 eggs, so 13 - 4 = 9 eggs remain.
She sells the remainder at the farmers' market daily for $2 per fresh duck egg.
So she makes 9 * $2 = $18 every day at the farmers' market.
To double-check: 3 + 4 + 9 = 16 eggs in total, which matches the 16 eggs laid per day.
Over a week that would be 7 * $18 = $126, but the question only asks about one day.
The answer is $18.
#### 18`

func BenchmarkFindAllFlexible(b *testing.B) {
	re := MustCompile(`(-?[$0-9.,]{2,})|(-?[0-9]+)`)
	if n := len([]rune(gsm8kAnswer)); n < 550 || n > 650 {
		b.Fatalf("benchmark text has %d characters", n)
	}
	b.SetBytes(int64(len(gsm8kAnswer)))
	b.ReportAllocs()
	for b.Loop() {
		if len(re.FindAll(gsm8kAnswer)) == 0 {
			b.Fatal("no match")
		}
	}
}

func BenchmarkFindAllStrict(b *testing.B) {
	re := MustCompile(`#### (\-?[0-9\.\,]+)`)
	b.SetBytes(int64(len(gsm8kAnswer)))
	b.ReportAllocs()
	for b.Loop() {
		if len(re.FindAll(gsm8kAnswer)) != 1 {
			b.Fatal("no match")
		}
	}
}

func BenchmarkSubIgnore(b *testing.B) {
	re := MustCompile(`(?s).*#### `)
	b.ReportAllocs()
	for b.Loop() {
		if strings.TrimSpace(re.Sub(gsm8kAnswer)) != "18" {
			b.Fatal("wrong result")
		}
	}
}

func BenchmarkCompileCached(b *testing.B) {
	MustCompile(`(-?[$0-9.,]{2,})|(-?[0-9]+)`)
	for b.Loop() {
		if _, err := Compile(`(-?[$0-9.,]{2,})|(-?[0-9]+)`); err != nil {
			b.Fatal(err)
		}
	}
}
