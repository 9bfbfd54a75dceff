package ledger

import "testing"

func TestParseDecimal(t *testing.T) {
	for _, tt := range []struct {
		in    string
		scale int
		want  Amount
		ok    bool
	}{
		{"12.50", 6, 12_500_000, true},
		{"0.000001", 6, 1, true},
		{"7", 6, 7_000_000, true},
		{".5", 2, 50, true},
		{"5.", 2, 500, true},
		{" 3.25 ", 2, 325, true},
		{"0", 6, 0, true},
		{"0.0000001", 6, 0, false},
		{"-1", 6, 0, false},
		{"1e3", 6, 0, false},
		{"", 6, 0, false},
		{".", 6, 0, false},
		{"1.2.3", 6, 0, false},
		{"99999999999999999999", 0, 0, false},
		{"9223372036854.775807", 6, 9223372036854775807, true},
		{"9223372036854.775808", 6, 0, false},
	} {
		got, err := ParseDecimal(tt.in, tt.scale)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseDecimal(%q, %d) = %d, %v; want %d, ok %v", tt.in, tt.scale, got, err, tt.want, tt.ok)
		}
	}
}

func TestDecimalRoundTrips(t *testing.T) {
	for _, a := range []Amount{0, 1, 999_999, 1_000_000, 12_500_000, -2_500_000} {
		s := a.Decimal(6)
		if a < 0 {
			if s != "-2.500000" {
				t.Errorf("Decimal(%d) = %q", a, s)
			}
			continue
		}
		back, err := ParseDecimal(s, 6)
		if err != nil || back != a {
			t.Errorf("%d → %q → %d, %v", a, s, back, err)
		}
	}
	if got := Amount(1234).Decimal(0); got != "1234" {
		t.Errorf("Decimal(0) = %q", got)
	}
}
