package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/nettest"
)

func TestGuardCheck(t *testing.T) {
	res := nettest.NewResolver(nettest.Names{
		"public.example":      "93.184.216.34 2606:2800:220:1:248:1893:25c8:1946",
		"loop.example":        "127.0.0.1",
		"ten.example":         "10.1.2.3",
		"oneseventwo.example": "172.20.0.5",
		"home.example":        "192.168.1.10",
		"ula.example":         "fd12:3456:789a::1",
		"linklocal6.example":  "fe80::1",
		"linklocal4.example":  "169.254.169.254",
		"cgnat.example":       "100.64.0.1",
		"mapped.example":      "::ffff:10.0.0.1",
		"mixed.example":       "93.184.216.34 10.0.0.1",
		"empty.example":       "",
	})
	tests := []struct {
		url  string
		want error
	}{
		{"https://public.example/", nil},
		{"http://public.example:8080/searx/", nil},
		{"https://93.184.216.34/", nil},
		{"https://[2606:2800:220:1:248:1893:25c8:1946]/", nil},
		{"https://PUBLIC.example./", nil},
		// literal addresses
		{"https://127.0.0.1/", ErrPrivateAddress},
		{"https://127.8.9.10:8888/", ErrPrivateAddress},
		{"https://[::1]/", ErrPrivateAddress},
		{"https://10.0.0.1/", ErrPrivateAddress},
		{"https://172.16.0.1/", ErrPrivateAddress},
		{"https://172.31.255.254/", ErrPrivateAddress},
		{"https://172.32.0.1/", nil},
		{"https://192.168.0.1/", ErrPrivateAddress},
		{"https://[fc00::1]/", ErrPrivateAddress},
		{"https://[fdff:ffff::1]/", ErrPrivateAddress},
		{"https://[fe80::1]/", ErrPrivateAddress},
		{"https://[fe80::1%25eth0]/", ErrPrivateAddress},
		{"https://169.254.169.254/latest/meta-data/", ErrPrivateAddress},
		{"https://0.0.0.0/", ErrPrivateAddress},
		{"https://[::]/", ErrPrivateAddress},
		{"https://224.0.0.1/", ErrPrivateAddress},
		{"https://[ff02::1]/", ErrPrivateAddress},
		{"https://100.64.0.1/", ErrPrivateAddress},
		{"https://100.127.255.255/", ErrPrivateAddress},
		{"https://100.128.0.1/", nil},
		{"https://255.255.255.255/", ErrPrivateAddress},
		{"https://[::ffff:127.0.0.1]/", ErrPrivateAddress},
		{"https://[::ffff:192.168.1.1]/", ErrPrivateAddress},
		{"https://[::ffff:93.184.216.34]/", ErrPrivateAddress}, // ::ffff:0:0/96 spelled out: not globally reachable
		{"https://[64:ff9b::a00:1]/", ErrPrivateAddress},       // NAT64 of 10.0.0.1
		{"https://[64:ff9b::5db8:d822]/", nil},                 // NAT64 of 93.184.216.34
		{"https://[2002:c0a8:101::1]/", ErrPrivateAddress},     // 6to4 of 192.168.1.1
		{"https://[2001:db8::1]/", ErrPrivateAddress},          // documentation
		// legacy IPv4 forms some resolvers accept
		{"https://2130706433/", ErrPrivateAddress}, // 127.0.0.1
		{"https://0x7f.1/", ErrPrivateAddress},
		{"https://0177.0.0.1/", ErrPrivateAddress},
		{"https://10.1/", ErrPrivateAddress},
		{"https://1572395042/", nil}, // 93.184.216.34
		// names
		{"https://localhost/", ErrPrivateAddress},
		{"https://searx.localhost:8888/", ErrPrivateAddress},
		{"https://loop.example/", ErrPrivateAddress},
		{"https://ten.example/", ErrPrivateAddress},
		{"https://oneseventwo.example/", ErrPrivateAddress},
		{"https://home.example/", ErrPrivateAddress},
		{"https://ula.example/", ErrPrivateAddress},
		{"https://linklocal6.example/", ErrPrivateAddress},
		{"https://linklocal4.example/", ErrPrivateAddress},
		{"https://cgnat.example/", ErrPrivateAddress},
		{"https://mapped.example/", ErrPrivateAddress},
		{"https://mixed.example/", ErrPrivateAddress},
		{"https://nxdomain.example/", ErrResolve},
		{"https://empty.example/", ErrResolve},
		// not instances at all
		{"ftp://public.example/", ErrScheme},
		{"public.example", ErrScheme},
		{"https:///nohost", ErrBadURL},
		{"https://%zz/", ErrBadURL},
	}
	g := Guard{Resolver: res}
	for _, tt := range tests {
		if err := g.Check(context.Background(), tt.url); !errors.Is(err, tt.want) {
			t.Errorf("Check(%q) = %v, want %v", tt.url, err, tt.want)
		}
	}
	if dns := (*net.DNSError)(nil); !errors.As(g.Check(context.Background(), "https://nxdomain.example/"), &dns) || !dns.IsNotFound {
		t.Error("the resolver's error is not wrapped")
	}
}

func TestGuardAllowPrivate(t *testing.T) {
	res := nettest.NewResolver(nettest.Names{"home.example": "192.168.1.10"})
	g := Guard{AllowPrivate: true, Resolver: res}
	for _, u := range []string{"http://127.0.0.1:8888/", "https://home.example/", "http://localhost/", "https://[fe80::1]/"} {
		if err := g.Check(context.Background(), u); err != nil {
			t.Errorf("Check(%q) with AllowPrivate = %v", u, err)
		}
	}
	for u, want := range map[string]error{"ftp://127.0.0.1/": ErrScheme, "http://": ErrBadURL} {
		if err := g.Check(context.Background(), u); !errors.Is(err, want) {
			t.Errorf("Check(%q) with AllowPrivate = %v, want %v", u, err, want)
		}
	}
	if asked := res.Asked(); len(asked) != 0 {
		t.Errorf("AllowPrivate still resolved %v", asked)
	}
}

func TestLegacyIPv4(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" = not an address
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0x7F.0.0.1", "127.0.0.1"},
		{"0177.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"10.1.65535", "10.1.255.255"},
		{"10.1.65536", ""},
		{"256.1.1.1", ""},
		{"4294967295", "255.255.255.255"},
		{"4294967296", ""},
		{"1.2.3.4.5", ""},
		{"1..2", ""},
		{"08.1.1.1", ""},
		{"0x", ""},
		{"example.org", ""},
		{"123.example", ""},
		{"", ""},
	}
	for _, tt := range tests {
		a, ok := legacyIPv4(tt.in)
		got := ""
		if ok {
			got = a.String()
		}
		if got != tt.want {
			t.Errorf("legacyIPv4(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPublicAddr(t *testing.T) {
	if PublicAddr(netip.Addr{}) {
		t.Error("the zero Addr is public")
	}
	for _, s := range []string{"1.1.1.1", "8.8.8.8", "2a00:1450:4001:80b::200e", "::ffff:1.1.1.1"} {
		if !PublicAddr(netip.MustParseAddr(s)) {
			t.Errorf("PublicAddr(%s) = false", s)
		}
	}
	for _, s := range []string{"127.0.0.1", "10.0.0.1", "172.16.0.1", "192.168.0.1", "169.254.1.1",
		"100.64.0.1", "0.1.2.3", "192.0.2.1", "198.18.0.1", "240.0.0.1", "::1", "::", "fc00::1", "fe80::1",
		"ff02::1", "fec0::1", "::127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::1"} {
		if PublicAddr(netip.MustParseAddr(s)) {
			t.Errorf("PublicAddr(%s) = true", s)
		}
	}
}

// CheckLiteral judges what a URL says and leaves names to the dialer.
func TestGuardCheckLiteral(t *testing.T) {
	g := Guard{Resolver: nettest.NewResolver(nettest.Names{"private.example": "10.0.0.1"})}
	for raw, want := range map[string]error{
		"https://private.example/": nil, // not resolved here: the dialer checks it
		"https://unknown.example/": nil,
		"https://93.184.216.34/":   nil,
		"http://10.1.2.3/":         ErrPrivateAddress,
		"http://0x7f.1/":           ErrPrivateAddress,
		"http://localhost:8888/":   ErrPrivateAddress,
		"ftp://93.184.216.34/":     ErrScheme,
		"https:///no-host":         ErrBadURL,
	} {
		if err := g.CheckLiteral(raw); !errors.Is(err, want) || (want == nil && err != nil) {
			t.Errorf("CheckLiteral(%q) = %v, want %v", raw, err, want)
		}
	}
	if err := (Guard{AllowPrivate: true}).CheckLiteral("http://10.1.2.3/"); err != nil {
		t.Errorf("with AllowPrivate: %v", err)
	}
}

func TestGuardPortAndLength(t *testing.T) {
	g := Guard{AllowPrivate: true}
	for _, u := range []string{"https://example.org:0/", "https://example.org:99999/", "https://example.org/" + strings.Repeat("a", 60<<10)} {
		if err := g.Check(context.Background(), u); !errors.Is(err, ErrBadURL) {
			t.Errorf("Check(%.60q) = %v, want ErrBadURL", u, err)
		}
	}
	if err := g.Check(context.Background(), "https://example.org:8443/"); err != nil {
		t.Errorf("a good port: %v", err)
	}
}

// FuzzGuardCheck: Check never panics, answers with its sentinels, and
// never admits an address literal PublicAddr refuses.
func FuzzGuardCheck(f *testing.F) {
	for _, s := range []string{"https://public.example/", "https://127.0.0.1/", "https://2130706433/",
		"https://[::ffff:10.0.0.1]/", "https://0x7f.1/", "https://[64:ff9b::a00:1]/", "https://localhost./", "ftp://x/"} {
		f.Add(s)
	}
	res := nettest.NewResolver(nettest.Names{"public.example": "93.184.216.34"})
	g := Guard{Resolver: res}
	f.Fuzz(func(t *testing.T, raw string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := g.Check(ctx, raw)
		if err != nil {
			for _, s := range []error{ErrScheme, ErrBadURL, ErrPrivateAddress, ErrResolve} {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("Check(%q): error outside the sentinels: %v", raw, err)
		}
		u, perr := url.Parse(strings.TrimSpace(raw))
		if perr != nil {
			t.Fatalf("Check(%q) admitted an unparsable URL", raw)
		}
		host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
		if a, ok := literalAddr(host); ok && !PublicAddr(a) {
			t.Fatalf("Check(%q) admitted %v", raw, a)
		}
		if ip := net.ParseIP(host); ip != nil && (ip.IsLoopback() || ip.IsPrivate()) {
			t.Fatalf("Check(%q) admitted %v", raw, ip)
		}
	})
}

// FuzzLiteralAddr: skipping the parse of names changes no answer.
func FuzzLiteralAddr(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "2130706433", "0x7f.1", "0177.0.0.1", "0X7F.0.0.1", "::1", "[::1]",
		"fe80::1%eth0", "img.example", "deadbeef", "0xdeadbeef", "cafe.face", "1.2.3.4.5", "localhost", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		got, gotOK := literalAddr(host)
		want, wantOK := netip.ParseAddr(host)
		if wantOK != nil {
			want, _ = legacyIPv4(host)
		}
		_, legacyOK := legacyIPv4(host)
		if gotOK != (wantOK == nil || legacyOK) || (gotOK && got != want) {
			t.Fatalf("literalAddr(%q) = %v %v, want %v", host, got, gotOK, want)
		}
	})
}
