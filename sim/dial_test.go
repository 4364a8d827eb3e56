package sim

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
)

func TestDial(t *testing.T) {
	f, err := Start(Config{InMemory: true, BasePort: 31000, Instances: []InstanceConfig{
		{ID: "up", Latency: -1, JSON: true}, {ID: "down", Behaviour: Dead},
	}})
	if err != nil {
		t.Fatal(err)
	}
	up, down := f.Instance("up"), f.Instance("down")
	if up.URL() != "http://127.0.0.1:31000/" || down.URL() != "http://127.0.0.1:31001/" {
		t.Errorf("URLs %s %s", up.URL(), down.URL())
	}
	if s, _, _ := memGet(t, memClient(f), up.URL()+"healthz", nil); s != 200 {
		t.Errorf("healthz through Dial: %d", s)
	}
	if _, err := f.Dial(down.Addr()); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dead: %v", err)
	}
	if _, err := f.Dial("127.0.0.2:31000"); !errors.Is(err, ErrNotFleet) {
		t.Errorf("stranger: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Dial(up.Addr()); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// TestBasePort checks consecutive TCP ports, a dead one left unused.
func TestBasePort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if base > 65000 {
		base -= 1000
	}
	f, err := Start(Config{BasePort: base, Instances: []InstanceConfig{
		{Latency: -1}, {Behaviour: Dead}, {Latency: -1},
	}})
	if errors.Is(err, syscall.EADDRINUSE) {
		t.Skipf("ports from %d are taken: %v", base, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i, in := range f.Instances() {
		if want := "http://127.0.0.1:" + strconv.Itoa(base+i) + "/"; in.URL() != want {
			t.Errorf("instance %d at %s, want %s", i, in.URL(), want)
		}
	}
	if a := get(t, f.Instances()[2].URL()+"healthz", nil); a.status != 200 {
		t.Errorf("third instance: %d %v", a.status, a.err)
	}
	if a := get(t, f.Instances()[1].URL()+"healthz", nil); !errors.Is(a.err, syscall.ECONNREFUSED) {
		t.Errorf("dead instance: %v", a.err)
	}
}
