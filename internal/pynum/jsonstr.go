package pynum

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string literal exactly as Python's json
// encoder writes it with ensure_ascii=False (the setting lm-eval writes its
// files with): the escapes \" \\ \n \r \t \b \f, \u00XX (lower-case hex)
// for the other control characters, and every other byte (DEL, U+2028, all
// non-ASCII, and bytes that are not UTF-8) unchanged.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = AppendEscaped(dst, s)
	return append(dst, '"')
}

// AppendEscaped appends the inside of the string literal AppendString
// writes: s escaped, without the quotes. A long prefix shared by many
// strings can be escaped once with it and reused.
func AppendEscaped(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	return append(dst, s[start:]...)
}
