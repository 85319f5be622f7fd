package simulate

import "testing"

// BenchmarkGenerateFull writes a full-size study: MMLU 14,042 questions ×
// 4 choices with 5-shot prompts and GSM8K 1,319 documents × 2 filters.
func BenchmarkGenerateFull(b *testing.B) {
	for b.Loop() {
		out, err := Generate(b.TempDir(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(out.Bytes)
	}
}
