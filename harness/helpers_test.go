package harness

import "strconv"

func strconvFormatFloat(f float64, fmt byte) string { return strconv.FormatFloat(f, fmt, -1, 64) }
