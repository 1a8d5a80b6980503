package nfq

import (
	"net/netip"
	"testing"
	"time"
)

func TestParseLink(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Link
		err  bool
	}{
		{"10.0.0.2", Link{Prefix: netip.MustParsePrefix("10.0.0.2/32")}, false},
		{"b=10.0.0.2,delay=50ms", Link{Name: "b", Prefix: netip.MustParsePrefix("10.0.0.2/32"), Delay: 50 * time.Millisecond}, false},
		{"zone-eu=10.0.1.0/24,delay=40ms,jitter=2ms,loss=1%,rate=10mbit,queue=65536", Link{Name: "zone-eu",
			Prefix: netip.MustParsePrefix("10.0.1.0/24"), Delay: 40 * time.Millisecond, Jitter: 2 * time.Millisecond,
			Loss: 0.01, Rate: 10_000_000, QueueBytes: 65536}, false},
		{"fd00::2,loss=30%", Link{Prefix: netip.MustParsePrefix("fd00::2/128"), Loss: 0.3}, false},
		{"validator1=validator1,delay=42ms,jitter=2.1ms", Link{Name: "validator1", Host: "validator1", Delay: 42 * time.Millisecond, Jitter: 2100 * time.Microsecond}, false},
		{"seed0.benchnet_x,loss=1%", Link{Host: "seed0.benchnet_x", Loss: 0.01}, false},
		{"10.0.0.300", Link{}, true},
		{"bad host,delay=1ms", Link{}, true},
		{"10.0.0.2,delay=-1ms", Link{}, true},
		{"10.0.0.2,loss=0.3", Link{}, true}, // a percentage, as the manifest
		{"10.0.0.2,jitter=-2ms", Link{}, true},
		{"10.0.0.2,rate=fast", Link{}, true},
		{"10.0.0.2,queue=0", Link{}, true},
		{"10.0.0.2,color=red", Link{}, true},
		{"10.0.0.2,delay", Link{}, true},
	} {
		got, err := ParseLink(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("%q: error %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if !tc.err && got != tc.want {
			t.Errorf("%q = %+v, want %+v", tc.in, got, tc.want)
		}
		if !tc.err {
			back, err := ParseLink(got.String())
			if err != nil || back != got {
				t.Errorf("%q: String %q reads back as %+v, %v", tc.in, got.String(), back, err)
			}
		}
	}
}

func TestRulesArgv(t *testing.T) {
	r := Rules{Queue: 3, Prefixes: []netip.Prefix{
		netip.MustParsePrefix("10.0.0.2/32"), netip.MustParsePrefix("10.0.1.7/24"), netip.MustParsePrefix("fd00::/64"),
	}}
	got := r.NftArgv()
	want := [][]string{
		{"nft", "add", "table", "inet", "benchnet_linkem"},
		{"nft", "add", "chain", "inet", "benchnet_linkem", "output", "{", "type", "filter", "hook", "output", "priority", "0", ";", "policy", "accept", ";", "}"},
		{"nft", "add", "rule", "inet", "benchnet_linkem", "output", "ip", "daddr", "{", "10.0.0.2/32, 10.0.1.0/24", "}", "queue", "num", "3", "bypass"},
		{"nft", "add", "rule", "inet", "benchnet_linkem", "output", "ip6", "daddr", "{", "fd00::/64", "}", "queue", "num", "3", "bypass"},
	}
	sameArgv(t, got, want)
	sameArgv(t, r.IptablesArgv(), [][]string{
		{"iptables", "-w", "-N", "BENCHNET_LINKEM"},
		{"iptables", "-w", "-A", "BENCHNET_LINKEM", "-d", "10.0.0.2/32", "-j", "NFQUEUE", "--queue-num", "3", "--queue-bypass"},
		{"iptables", "-w", "-A", "BENCHNET_LINKEM", "-d", "10.0.1.0/24", "-j", "NFQUEUE", "--queue-num", "3", "--queue-bypass"},
		{"iptables", "-w", "-I", "OUTPUT", "1", "-j", "BENCHNET_LINKEM"},
		{"ip6tables", "-w", "-N", "BENCHNET_LINKEM"},
		{"ip6tables", "-w", "-A", "BENCHNET_LINKEM", "-d", "fd00::/64", "-j", "NFQUEUE", "--queue-num", "3", "--queue-bypass"},
		{"ip6tables", "-w", "-I", "OUTPUT", "1", "-j", "BENCHNET_LINKEM"},
	})
}

func sameArgv(t *testing.T, got, want [][]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d commands %q, want %d", len(got), got, len(want))
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Errorf("command %d = %q, want %q", i, got[i], want[i])
			continue
		}
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Errorf("command %d = %q, want %q", i, got[i], want[i])
				break
			}
		}
	}
}
