package ledger

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseDecimal reads s, a non-negative decimal such as "12.50", as an Amount
// of a unit with scale decimal places: ParseDecimal("12.50", 6) is 12,500,000
// micro-dollars. It refuses more decimals than the unit has, signs,
// exponents and values too large for an Amount, rather than rounding.
func ParseDecimal(s string, scale int) (Amount, error) {
	if scale < 0 || scale > 18 {
		return 0, fmt.Errorf("the scale %d of an amount is outside 0 to 18", scale)
	}
	t := strings.TrimSpace(s)
	whole, frac, hasDot := strings.Cut(t, ".")
	if whole == "" && (!hasDot || frac == "") || !digits(whole) || !digits(frac) {
		return 0, fmt.Errorf("%q is not a decimal amount such as 12.50", s)
	}
	if len(frac) > scale {
		return 0, fmt.Errorf("%q has more than %d decimal places", s, scale)
	}
	frac += strings.Repeat("0", scale-len(frac))
	all := strings.TrimLeft(whole+frac, "0")
	if all == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(all, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is too large for an amount", s)
	}
	return Amount(n), nil
}

// Decimal formats a with scale decimal places: Amount(12500000).Decimal(6)
// is "12.500000".
func (a Amount) Decimal(scale int) string {
	if scale <= 0 {
		return strconv.FormatInt(int64(a), 10)
	}
	sign := ""
	v := uint64(a)
	if a < 0 {
		sign, v = "-", uint64(-a)
	}
	s := strconv.FormatUint(v, 10)
	if len(s) <= scale {
		s = strings.Repeat("0", scale-len(s)+1) + s
	}
	return sign + s[:len(s)-scale] + "." + s[len(s)-scale:]
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
