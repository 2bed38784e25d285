package data

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kernelkit/kernelkit/internal/limits"
)

// maxQuoted is the most bytes of an offending cell or token that an error
// message quotes (escapes counted); the rest is elided.
const maxQuoted = 40

// quote returns s quoted as by strconv.Quote, cut to maxQuoted bytes of
// quoted text with its length noted if it is longer, so that an error
// message stays one short line whatever the input.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	n := 0
	for i, w := 0, 0; i < len(s); i += w {
		_, w = utf8.DecodeRuneInString(s[i:])
		q := strconv.Quote(s[i : i+w])
		q = q[1 : len(q)-1]
		if n+len(q) > maxQuoted {
			fmt.Fprintf(&b, "\"… (%d bytes)", len(s))
			return b.String()
		}
		b.WriteString(q)
		n += len(q)
	}
	b.WriteByte('"')
	return b.String()
}

// isDecimal reports whether s is a plain decimal number: an optional sign,
// digits with an optional fraction (at least one digit in all), and an
// optional exponent e or E with an optional sign and at least one digit.
func isDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// parseDecimal parses a plain decimal number (see isDecimal) to a finite
// float64. It rejects the other forms strconv.ParseFloat accepts (digit
// separators as in 1_000, hexadecimal as in 0x1p4, Inf, Infinity and NaN)
// and numbers beyond the float64 range; numbers below it round to zero.
func parseDecimal(s string) (float64, error) {
	if !isDecimal(s) {
		switch strings.ToLower(strings.TrimLeft(s, "+-")) {
		case "inf", "infinity", "nan":
			return 0, fmt.Errorf("value %s is not finite", quote(s))
		}
		return 0, fmt.Errorf("%s is not a number (want a plain decimal such as -1.5e3)", quote(s))
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("value %s is not finite (beyond the float64 range)", quote(s))
	}
	return v, nil
}

// parseIndex parses a LIBSVM feature index: decimal digits, between 1 and
// limits.MaxDim.
func parseIndex(s string) (int, error) {
	if s == "" || strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, fmt.Errorf("index %s is not a positive integer", quote(s))
	}
	digits := strings.TrimLeft(s, "0")
	if digits == "" {
		return 0, errors.New("feature index 0: indices start at 1")
	}
	v := 0
	if len(digits) <= 9 { // below 10⁹: no overflow
		for i := 0; i < len(digits); i++ {
			v = 10*v + int(digits[i]-'0')
		}
	}
	if v == 0 || v > limits.MaxDim {
		if len(digits) > maxQuoted {
			digits = digits[:maxQuoted] + fmt.Sprintf("… (%d digits)", len(digits))
		}
		return 0, fmt.Errorf("feature index %s is above the limit %d", digits, limits.MaxDim)
	}
	return v, nil
}
