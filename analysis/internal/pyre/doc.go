// Package pyre reproduces, bit for bit, the parts of Python's re module and
// str type that lm-evaluation-harness filters and metrics rely on, so that
// its outputs can be re-scored in Go: re.findall (RegexFilter and friends),
// re.sub(pattern, "", s) (exact_match's regexes_to_ignore), re.search,
// re.escape (multi_choice_regex), and str.strip, str.lower and str.upper.
//
// The reference is the behaviour of CPython 3.11's re module (with the
// Python 3.7+ rules for empty matches) as documented in the Python Library
// Reference and as observed by running it; the package's tests compare
// pyre against /usr/bin/python3 on every run.
//
// # How
//
// Compile parses the pattern with a recursive-descent parser written from
// the documented syntax of Python's re (parse.go): literals and escapes,
// classes, groups of every kind, inline flags, conditionals and
// quantifiers, with the rules Python applies to them (which escapes are
// errors, when a digit escape is a back-reference and when it is octal,
// when '{' is literal, where global flags may stand, which lookbehinds
// are fixed-width, which references are to open or unknown groups) and
// Python's error messages. Flags are resolved while parsing, so every
// node of the tree carries the flags that hold where it stands.
//
// The tree is then written out as a pattern for github.com/dlclark/regexp2
// (translate.go), a backtracking engine with .NET syntax and semantics,
// compiled without options. Whatever means something different in the two
// engines is spelled out instead of left to regexp2:
//
//   - Every literal, class and category escape becomes the exact set of
//     code points Python matches (charset.go), written as a regexp2 class
//     that uses \p{L}, \p{N} or \p{Nd} where the set is close to one
//     (regexp2 tests a class's explicit ranges one by one). \w is
//     str.isalnum() plus "_", i.e. categories L and N plus "_" (.NET's \w
//     has Mn and Pc instead); \d is Nd; \s is str.isspace(), which includes
//     U+001C..U+001F; under ASCII they are [0-9A-Za-z_], [0-9] and
//     [\t-\r ].
//   - IGNORECASE is never handed to regexp2 (except for back-references,
//     whose comparison, simple lowercase against simple lowercase, is the
//     same in both engines): the sets are folded by rules measured on
//     CPython over all code points (casefold.go; casefold_test.go re-runs
//     the measurement and regenerates casetables.go). A character matches
//     its Unicode simple case folding orbit, with four orbits merged
//     further (I i İ ı, ΐ ΐ, ΰ ΰ, ﬅ ﬆ); category escapes do not fold; in a
//     class of several items a character above U+FFFF matches only what
//     lowercases to it; a range reaching above U+FFFF matches each
//     character one of whose probes (its orbit and the first character of
//     its full uppercase) lies in it; under ASCII only ASCII letters fold,
//     except in such ranges.
//   - \b and \B become lookarounds over Python's word set, and \B fails
//     in an empty string as it does in Python; \Z becomes \z; ^ without
//     MULTILINE becomes \A; ^ and $ with MULTILINE and . with or without
//     DOTALL are written per occurrence, so scoped flags need no care.
//   - Capturing groups are written with explicit numbers, (?<n>...), in
//     Python's order (.NET numbers named groups after the others); names
//     never reach regexp2.
//   - A quantifier whose body can match the empty string and that has both
//     a mandatory and an optional part is written as two loops,
//     X{m,n} as X{m}X{0,n-m}: Python always tries one more iteration
//     after the mandatory ones, even when the last of them matched the
//     empty string, where regexp2's loops can stop at that empty
//     iteration. Both copies capture into the same group numbers.
//   - Possessive quantifiers become atomic groups, X*+ as (?>X*).
//   - After an empty match, findall and sub search on with a variant of the
//     pattern ending in (?!\G), which rejects exactly an empty match at the
//     position the search starts from (Python's rule that the next match
//     must not be an empty one at the same place).
//
// Lookbehinds need no rewriting: Python only accepts fixed-width ones and
// forbids references to groups of the same lookbehind, so regexp2's
// right-to-left matching of them finds the same spans and captures, except
// for a group captured repeatedly (refused, see below).
//
// Positions are code points, like Python's str indices; strings returned are
// always slices of the input.
//
// Compiled patterns are cached by pattern text, since lm-eval uses a handful
// of patterns millions of times; the cache is emptied when it passes 2048
// entries, because some patterns are built per document.
//
// # Known differences from CPython 3.11
//
// Compile returns an *Error with Unsupported set, instead of guessing, for
// these valid Python constructs: \N{name} escapes (Go has no Unicode name
// table, so pyre cannot tell a valid name from an invalid one); the
// deprecated (?t) flag; a back-reference under both (?a) and (?i)
// (regexp2 would compare with Unicode case folding); a capturing group
// repeated inside a lookbehind (regexp2 matches lookbehinds right to left
// and would keep another repetition's capture); a conditional (?(N)...)
// inside group N itself (Python then consults the group's half-updated
// state, which regexp2 cannot reproduce); and repeat counts above
// 2147483646 (regexp2's limit; Python's is 4294967294).
//
// What is accepted but can still differ:
//
//   - Unicode version. Classes and case mappings come from Go's unicode
//     package (Unicode 15.0.0 for Go 1.26). CPython 3.11 uses 14.0.0, 3.12
//     15.0.0, 3.13 15.1.0. Code points assigned in one version and not the
//     other (4489 between 14.0 and 15.0) can classify differently.
//   - Later CPythons' re. 3.12 refuses a conditional reference that is not
//     ASCII digits ((?( 1 )...), (?(+1)...), (?(١)...)), which 3.11 and
//     pyre accept; CPython 3.13 matches some sets and ranges differently
//     under IGNORECASE (seen with non-BMP letters and with ranges that end
//     beyond the BMP), and its Unicode 15.1 is newer than Go's tables.
//     The differential test fails on differences only against CPython
//     3.11 and lists them against another version.
//   - Input that is not valid UTF-8, which a Python str cannot hold, is
//     matched one invalid byte at a time as U+FFFD and returned unchanged.
//     A lone surrogate, which a Python str can hold, never reaches Go as
//     such (encoding/json turns it into U+FFFD), so a pattern written to
//     match one (\ud800) matches nothing.
//   - Search reports a group that did not participate as "" (Python: None);
//     FindAll does what Python's findall does, "".
//   - Possessive quantifiers (3.11+ syntax) follow their documented meaning,
//     (?>X{m,n}). CPython 3.11.2 mishandles some possessive repeats of
//     groups (MemoryError, "The span of capturing group is wrong"); older
//     Pythons reject the syntax, pyre accepts it.
//   - Group names are checked as str.isidentifier does, from Go's Unicode
//     tables. Error messages and positions follow Python's wording but are
//     not promised to be identical; where Python raises OverflowError,
//     ValueError or RuntimeError instead of re.error (huge repeat counts,
//     (?a) and (?u) both global, lookbehinds wider than 2**31-1), pyre
//     returns an *Error too.
//   - There is no match timeout: a pattern that backtracks exponentially
//     does so here as it does in Python.
package pyre
