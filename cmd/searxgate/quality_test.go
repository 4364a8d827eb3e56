package main

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/searxgate/searxgate/pool"
	"github.com/searxgate/searxgate/sim"
)

// TestDirectoryFailingEnginesArePriors: an instance whose Google test
// searches never succeeded on searx.space (timing.search_go at 0 %) has
// google taken as suspended there when the list is seeded; the other
// instance has nothing held against it.
func TestDirectoryFailingEnginesArePriors(t *testing.T) {
	fleet, _ := startFleet(t, 27, []sim.InstanceConfig{
		{ID: "nogoogle", Behaviour: sim.Fast, JSON: true, Latency: -1},
		{ID: "fine", Behaviour: sim.Fast, JSON: true, Latency: -1},
	})
	nogoogle, fine := fleet.Instance("nogoogle").URL(), fleet.Instance("fine").URL()
	dir := writeDirectory(t, dirEntry{nogoogle, 0.2}, dirEntry{fine, 0.3})
	raw, err := os.ReadFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	var list map[string]any
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	timing := list["instances"].(map[string]any)[nogoogle].(map[string]any)["timing"].(map[string]any)
	timing["search_go"] = map[string]any{"success_percentage": 0.0, "error": "No result"}
	if raw, err = json.Marshal(list); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, dir, "") // seeds the list before it serves
	if n := g.app.pool.Len(); n != 2 {
		t.Fatalf("%d instances seeded, want 2", n)
	}
	sus := g.app.pool.Stats(nogoogle).Quality.Suspended
	if len(sus) != 1 || sus[0].Engine != "google" || sus[0].Reason != pool.ReasonDirectory {
		t.Fatalf("%s: suspended %+v, want google from the directory", nogoogle, sus)
	}
	if sus := g.app.pool.Stats(fine).Quality.Suspended; len(sus) != 0 {
		t.Fatalf("%s: suspended %+v, want none", fine, sus)
	}
}
