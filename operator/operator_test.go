package operator

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/store"
)

type memStore struct{ ops map[string]store.Operator }

func (m *memStore) Operators() ([]store.Operator, error) {
	var out []store.Operator
	for _, o := range m.ops {
		out = append(out, o)
	}
	return out, nil
}
func (m *memStore) PutOperator(o store.Operator) error { m.ops[o.URL] = o; return nil }
func (m *memStore) ResetPool() error                   { return nil }

type fakeProxy struct {
	read, dropped []string
	resets        int
}

func (f *fakeProxy) ResetCounters() { f.resets++ }

func (f *fakeProxy) ReadTerms(insts []string) { f.read = append(f.read, insts...) }
func (f *fakeProxy) DropAnswersOf(inst string) (int, error) {
	f.dropped = append(f.dropped, inst)
	return 1, nil
}

func TestOperatorChangesAreKeptAndReplayed(t *testing.T) {
	st := &memStore{ops: map[string]store.Operator{}}
	px := &fakeProxy{}
	clk := clock.NewFake(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	p := pool.New(pool.Config{})
	p.Seed([]pool.Prior{{URL: "https://public.example/"}})
	o := New(Config{Pool: p, Terms: px, Answers: px, Store: st, MaxOwn: 2, Clock: clk})
	ctx := context.Background()

	u, err := o.Add(ctx, "HTTPS://Mine.Example")
	if err != nil || u != "https://mine.example/" {
		t.Fatalf("Add = %q, %v", u, err)
	}
	if len(px.read) != 1 || px.read[0] != u {
		t.Fatalf("terms read for %v, want the added instance", px.read)
	}
	if _, err := o.Add(ctx, "https://mine.example/"); err != nil {
		t.Fatalf("adding it again: %v", err)
	}
	if _, err := o.Add(ctx, "https://second.example/"); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Add(ctx, "https://third.example/"); !errors.Is(err, ErrTooManyOwn) {
		t.Fatalf("a third past MaxOwn 2: %v", err)
	}
	if _, err := o.Add(ctx, "http://127.0.0.1:8080/"); err == nil {
		t.Fatal("a loopback address was added without AllowPrivate")
	}
	if found, err := o.SetDisabled("https://public.example/", true); !found || err != nil || len(px.dropped) != 1 {
		t.Fatalf("disable: %v %v, dropped %v", found, err, px.dropped)
	}
	if found, err := o.Remove("https://second.example/"); !found || err != nil {
		t.Fatalf("remove: %v %v", found, err)
	}
	if !o.RemovedSet()["https://second.example/"] {
		t.Fatal("the removed instance is not in RemovedSet")
	}

	// A new process on the same store: the same pool.
	p2 := pool.New(pool.Config{})
	p2.Seed([]pool.Prior{{URL: "https://public.example/"}, {URL: "https://second.example/"}})
	o2 := New(Config{Pool: p2, Terms: px, Answers: px, Store: st, MaxOwn: 2, Clock: clk})
	if err := o2.Restore(); err != nil {
		t.Fatal(err)
	}
	if st := p2.Stats("https://mine.example/"); st.Tier != pool.Own {
		t.Fatalf("the added instance came back as %v", st.Tier)
	}
	if !p2.Stats("https://public.example/").Disabled {
		t.Fatal("the disabled instance came back enabled")
	}
	if p2.Len() != 2 {
		t.Fatalf("%d instances after restore, want 2 (the removed one gone)", p2.Len())
	}
}

// TestResetClearsThePoolAndTheRecords: a reset forgets what the pool
// learned and asks the instance records to clear their counters too, so
// /status and /metrics agree after it.
func TestResetClearsThePoolAndTheRecords(t *testing.T) {
	px := &fakeProxy{}
	p := pool.New(pool.Config{})
	p.Seed([]pool.Prior{{URL: "https://public.example/"}})
	ls, err := p.Checkout(context.Background(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Record(ls[0], pool.Outcome{Kind: pool.Failed}, time.Second)
	if st := p.Stats("https://public.example/"); st.Failures == 0 {
		t.Fatalf("the failure was not recorded: %+v", st)
	}
	o := New(Config{Pool: p, Terms: px, Answers: px, Store: &memStore{ops: map[string]store.Operator{}}})
	if err := o.Reset(); err != nil {
		t.Fatal(err)
	}
	if st := p.Stats("https://public.example/"); st.Failures != 0 {
		t.Errorf("after Reset the pool still holds %d failures", st.Failures)
	}
	if px.resets != 1 {
		t.Errorf("the records' counters were reset %d times, want 1", px.resets)
	}
}
