package pyre

import (
	"bufio"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/evalcapsule/evalcapsule/internal/fixtures"
)

// lmEvalPatterns are the regex_pattern values lm-eval's task configs use,
// plus the exact_match regexes_to_ignore, as of the harness versions whose
// outputs this project re-scores. All must compile and match like Python.
var lmEvalPatterns = []string{
	`(\([A-Z]\))`,
	`((?<=The answer is )(.*)(?=.)|(?<=the answer is )(.*)(?=.)|(?<=The answer: )(.*)(?=.)|(?<=The final answer: )(.*)(?=.))`,
	`(-?[$0-9.,]{2,})|(-?[0-9]+)`,
	`The answer is (\-?[0-9\.\,]*[0-9]+)`,
	`#### (\-?[0-9\.\,]+)`,
	`\b(Yes|No|yes|no)\b`,
	`([-0-9]+)`,
	`The final answer is ((-?[$0-9.,]{2,})|(-?[0-9]+))`,
	`The answer is (\-?[0-9\.\,]+).`,
	`\b(valid|invalid)\b`,
	`\b(True|False)\b`,
	`(?<= )([" \[\(<{}>\)\]]+)|([" \[\(<{}>\)\]]+)`,
	`答案是 (\-?[0-9\.\,]+)。`,
	`答えは(\-?[0-9\.\,]+)です。`,
	`คำตอบคือ (\-?[0-9\.\,]+)`,
	`final answer is (\-?[0-9\.\,]+)`,
	`(-?[0-9]+([ .,][0-9.,]+)?)`,
	`^\s*([A-D])`,
	`Erantzuna [$%]? ?(-?[0-9]+([ .,][0-9.,]+)?) ?[$%]? da`,
	`(\b[ABCD]\b)`,
	`(?=(female|woman|man|male))`,
	`answer is \(?([ABCDEFGHIJKL])\)?`,
	// exact_match regexes_to_ignore (applied with re.sub(p, "", s)).
	`,`,
	`\$`,
	`(?s).*#### `,
	`\.$`,
	// Patterns users put in their own task configs.
	`(?i)answer[^A-D]{0,25}([A-D])`,
	`(?i)\b([a-d])\b`,
	`(?i)(?<=the answer is )(.*)(?=.)`,
	// multi_choice_regex's built-in fallback.
	`:[\s]*(A|B|C|D)`,
}

// featurePatterns exercise the translation: empty matches, group counts,
// unmatched groups, anchors, flags, classes and escapes.
var featurePatterns = []string{
	``, `a*|b`, `\b`, `\B`, `x*`, `(?=(a|aa))`, `(a)|b`, `(a)|(b)`, `(a)?(b)?`,
	`(?:(a)|b)*`, `(a|)*`, `(a*)+`, `(a?)+?b`, `a??`, `(?:)`, `()`, `(?:a|)*?`,
	`^`, `$`, `\A`, `\Z`, `^$`, `(?m)^`, `(?m)$`, `(?m)^\w+$`, `\n$`, `$\n`,
	`.`, `(?s).`, `.+`, `(?s).+`, `.*`, `\d+`, `\D+`, `\s+`, `\S+`, `\w+`, `\W+`,
	`[\W_]+`, `[^\W\d_]+`, `[\s\S]`, `[^\s\S]`, `[\d\s]+`, `[^\d\s]+`,
	`(?a)\w+`, `(?a)\d+`, `(?a)\s+`, `(?a)\b\w`, `(?u)\w+`,
	`(?i)yes|no`, `(?i)[a-z]+`, `(?i)[^a-z]+`, `(?i)ß`, `(?i)ss`, `(?i)σ`, `(?i)k`,
	`(?i)(.)\1`, `(?i)(..)\1`, `(?i)(\w)\s?\1`, `(.)\1`, `(?P<q>["'])(.*?)(?P=q)`, `(?P<a>\d)(?P<b>\d)?`,
	`(?x) a b # comment`, `(?x)[ ]a`, `a{,2}`, `a{2,}`, `a{1,2}?`, `a{2}`, `x{`, `x{a}`, `{}`,
	`a*+`, `(?>a|ab)c`, `(?:ab)++`, `(?(1)a|b)`, `(a)?(?(1)b|c)`, `(?(1)x)(y)?`,
	`\x41\u0042\U00000043\101\0`, `[\x41-\x43]`, `\t\n\r\f\v\a`, `[\b]`, `\\`,
	`(?<=\d)(?=(\d{3})+\b)`, `(?<!\$)\b\d+\b`, `(?<=\b)\w`, `(?<=a|b)c`, `(?<![ab]{2})c`,
	`(?#comment)a`, `(?i:A)a`, `(?-i:a)`, `(?i)(?-i:a)A`, `(?s:.)`, `(?m:^a)`,
	`\d+(?:\.\d+)?`, `-?\d+(,\d{3})*(\.\d+)?`, `[٠-٩]+`, `\p`, `\z`, `(?<n>a)`, `(?L)a`,
	`a**`, `*a`, `(?<=a+)b`, `(a`, `a)`, `[a`, `[z-a]`, `\9`, `(?P=n)`, `(?i`,
	// Loops whose iterations can match empty, with captures that survive
	// an iteration (sre and .NET differ on when such a loop may iterate
	// again; these must still agree).
	`(?:()|a)+$`, `(?:(?=(a))|b)+?$`, `(?:(?=(.))|a)+?b`, `(?:(a)|b|)+c`, `(?:(a)|b|){2,}c`,
	`(a|)+b`, `(a|)*?b`, `((?=a)|a)+b`, `(?:(?=(a))a?){2}`, `(a?){3}`, `(a?)+?$`, `(?:x|(?=(a)))*a`,
	`(?:(a?)\1)+?$`, `(?:(a)?(?(1)b|c))+`, `(?:(?=(\w))\W?)+?$`, `(?:(?=(\w+))|\W)+?\b`,
	// References inside lookbehinds (to groups outside them), whose width
	// is the group's; conditionals there.
	`(\w)\w(?<=\1\w)`, `(?i)(\w)(?<=\1)`, `(?P<q>\w)\s(?<!(?P=q)\s)`, `(\w\w)(?<=\1)\s`, `(a)?\w(?<=(?(1)a|\w)\w)`,
	`(?<=(\w)\s)\1`, `(?<=(?<=(a))b)c\1`, `(?<=(a)(?<=\1))`, `(?<=(a))(?<=\1)b`, `(?<=()*)a`, `(?<=(?:()|())*)b`, `(?<=(a)(?<=(?(1)a|b)))`, `(?<=\b\w)\w`, `(?<!^)\w`, `(?<=\w$)`, `(?m)(?<=^.)\w`,
	// Group names and conditional references.
	`(?P<_>a)(?P=_)`, `(?P<é>\w)(?P=é)`, `(?P<a·b>\w)`, `(?P<ª>a)`, `(?P<℘>a)`, `(?P<a1>a)(?(a1)b|c)`, `(a)?(?(01)b|c)`,
	`(a)?(?( 1 )b|c)`, `(a)?(?(+1)b|c)`, `(a)?(?(١)b|c)`, `(a)?(?(1_0)b|c)`, `(?P<1a>a)`, `(?P<a-b>a)`, `(?P<ͺ>a)`, `(?P<aำ>a)`,
	// Escapes and verbose mode.
	`\x41\x4a\u00e9\U0001F600\0\01\012\0123\101\1010`, `[\0-\x1f\177]+`, `[\1-\7]`, `[\x41-\u005a]+`, `[\a\b\f\n\r\t\v]+`,
	`\é\-\ \#\_`, `[\é\-\]\\]+`, `(?x) a  b # c \n d`, `(?x)[ # ]+`, `(?x)a\ b`, `(?x)a{1, 2}`, `(?x)a {1,2}`, `(?x)(?#c) a`,
	`a{,}`, `a{1,2,3}`, `a{ 1}`, `a{-1}`, `a{01}`, `a{٣}`, `x{2}{`, `(?:a){0}b`, `a{0,0}`, `[a-z-0]+`, `[%--]+`, `[]a]+`, `[^]a]+`,
	`(?s:a.b)|a.b`, `(?m:$)\n`, `(?-m:^)a`, `(?m)(?-m:^)a`, `(?i:(?-i:a)A)`, `(?a:\w)+é`, `(?a)(?u:\w)+`, `(?x:a b) c`,
	`(?t)a`, `\N{DIGIT ONE}`, `(a)(?(1)(?(1)b|c)|d)`, `(?>a+)a`, `(?>(a)|b)*c`, `a++a`, `(?:a|ab)++c`, `a{1,2}+a`, `(a)*+`,
}

// realisticInputs are model outputs of the kinds lm-eval filters see.
var realisticInputs = []string{
	"", " ", "\n", "...", "!!!", "$", "$$", "#### ", "####", "a", "A", "yes", "No.",
	"The answer is 42.", "The answer is 42", "The answer is -3.5.", "The answer is $1,234.",
	"the answer is (B).", "The answer: C\n", "The final answer: 17.\n", "The final answer is $18.",
	"#### 1,234", "#### 72\n", "Step 1: 3 + 4 = 7\nStep 2: 16 - 7 = 9\n#### 9", "$5.00", "5,000,000",
	"Natalia sold 48/2 = <<48/2=24>>24 clips in May.\nNatalia sold 48+24 = <<48+24=72>>72 clips altogether in April and May.\n#### 72",
	"Let's think step by step.\nJanet's ducks lay 16 eggs per day. She eats 3 and bakes 4, so 16 - 3 - 4 = 9 eggs remain.\nShe sells them at $2 each: 9 * $2 = $18.\nThe answer is 18.\n",
	"Answer: (A)", "answer is (D)", "The answer is (K)", "(A) (B) (C)", "I think the answer is B.", "A. B. C. D.",
	"Yes, it is valid. No, it is invalid. True or False? true", "Yes\nNo\nyes\nno", "YESNO yes_no no-yes",
	"female woman man male", "The man and the woman.", "答案是 42。", "答案是 -3.5。", "答えは12です。", "คำตอบคือ 123",
	"Erantzuna 42 da", "Erantzuna $ 1.234,5 % da", "final answer is 7", "٣", "٣٤ ٥", "１２３", "Ⅻ ½ ²",
	"🙂 42 🙂", "emoji 👍🏽 then 5", "naïve café", "e\u0301", "ΣΑΣ ΟΔΟΣ σ", "İstanbul", "straße STRASSE",
	"ﬁnal ﬂow", "tab\tsep\x1carated\x1d\x1e\x1f", "\u00a0nbsp\u2003em\u3000ideo\u200bzw\ufeffbom", "line\r\nbreak\r\n",
	"\u2028ls\u2029ps\u0085nel", " (A) ", "[\"{<>}\"]", " \" [ ( < { } > ) ] ", "-", "--", "-12", "1.2.3", ",.,.",
	"a\n", "aa\n\n", "baaa", "aaa", "ab", "ba", "abab", "x", "xx", "y", "a b", "\ta\n", "foo.bar.", "end.", "end.\n",
	"The answer is 1,234.5 and $5. Yes, no! aa ∑x_ĳ٣", "abc 123 ab12 a1b2 __init__", "ı I i İ ſ S s K k K",
	"sſ ſS kK ßẞ σς Σσ İi ıI µμ ǅǆ ᾈᾀ ﬁFI", // for case-insensitive back-references
}

// fixtureTexts returns the model responses recorded in the lm-eval sample
// files under /work/shared/fixtures (resps and filtered_resps strings).
func fixtureTexts(t testing.TB) []string {
	t.Helper()
	root := fixtures.Dir(t, "lm-eval")
	seen := map[string]bool{}
	var texts []string
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() || !strings.HasPrefix(d.Name(), "samples_") || !strings.HasSuffix(d.Name(), ".jsonl") {
			return nil
		}
		files++
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var rec map[string]any
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				return err
			}
			for _, key := range []string{"resps", "filtered_resps"} {
				collectStrings(rec[key], func(s string) {
					if !seen[s] {
						seen[s] = true
						texts = append(texts, s)
					}
				})
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatalf("reading lm-eval fixtures: %v", err)
	}
	if files == 0 || len(texts) == 0 {
		t.Fatalf("no samples_*.jsonl responses found under %s", root)
	}
	sort.Strings(texts)
	return texts
}

func collectStrings(v any, fn func(string)) {
	switch v := v.(type) {
	case string:
		fn(v)
	case []any:
		for _, e := range v {
			collectStrings(e, fn)
		}
	}
}
