package linkem

import (
	"testing"
	"time"
)

func TestParseJitter(t *testing.T) {
	for _, tc := range []struct {
		in      string
		frac    float64
		abs     time.Duration
		wantErr bool
	}{
		{"", 0, 0, false},
		{"5%", 0.05, 0, false},
		{" 0.5 % ", 0.005, 0, false},
		{"2ms", 0, 2 * time.Millisecond, false},
		{"150us", 0, 150 * time.Microsecond, false},
		{"-2ms", 0, 0, true},
		{"101%", 0, 0, true},
		{"fast", 0, 0, true},
	} {
		f, a, err := ParseJitter(tc.in)
		if (err != nil) != tc.wantErr || f != tc.frac || a != tc.abs {
			t.Errorf("ParseJitter(%q) = %v, %v, %v; want %v, %v, err=%v", tc.in, f, a, err, tc.frac, tc.abs, tc.wantErr)
		}
	}
}

func TestParseLoss(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    float64
		wantErr bool
	}{
		{"", 0, false},
		{"0.1%", 0.001, false},
		{"100%", 1, false},
		{"0.1", 0, true}, // a bare fraction is ambiguous
		{"-1%", 0, true},
		{"NaN%", 0, true},
	} {
		got, err := ParseLoss(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseLoss(%q) = %v, %v; want %v, err=%v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestParseRateAndFormat(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    uint64
		format  string
		wantErr bool
	}{
		{"", 0, "", false},
		{"10mbit", 10_000_000, "10mbit", false},
		{"1.5gbit", 1_500_000_000, "1500mbit", false},
		{"500kbit", 500_000, "500kbit", false},
		{"12345bit", 12345, "12345bit", false},
		{"10MBIT", 10_000_000, "10mbit", false},
		{"10mbps", 0, "", true}, // tc's bps is bytes/s: refused, not guessed
		{"10", 0, "", true},
		{"0mbit", 0, "", true},
		{"4bit", 0, "", true},
	} {
		got, err := ParseRate(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v, err=%v", tc.in, got, err, tc.want, tc.wantErr)
			continue
		}
		if got > 0 && FormatRate(got) != tc.format {
			t.Errorf("FormatRate(%d) = %q, want %q", got, FormatRate(got), tc.format)
		}
	}
}
