package cache

import (
	"bytes"
	"testing"
)

func TestSealedAnswers(t *testing.T) {
	k := NewKeyer(bytes.Repeat([]byte{7}, 32))
	key := k.CacheKey("s\x00secret search")
	id, v, err := SealAnswer(key, []byte(`{"query":"secret"}`))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(v, []byte("secret")) || bytes.Contains([]byte(id), []byte("secret")) {
		t.Fatal("the sealed answer or its id holds the plain text")
	}
	if js, ok := OpenAnswer(key, v); !ok || string(js) != `{"query":"secret"}` {
		t.Fatalf("OpenAnswer = %q, %v", js, ok)
	}
	otherSecret := NewKeyer(bytes.Repeat([]byte{8}, 32)).CacheKey("s\x00secret search")
	otherSearch := k.CacheKey("s\x00another search")
	flipped := append(bytes.Clone(v[:len(v)-1]), v[len(v)-1]^1)
	for name, c := range map[string]struct {
		key string
		v   []byte
	}{"another secret": {otherSecret, v}, "another search": {otherSearch, v}, "cut short": {key, v[:5]}, "a flipped byte": {key, flipped}, "not a key": {"short", v}} {
		if _, ok := OpenAnswer(c.key, c.v); ok {
			t.Errorf("%s: opened", name)
		}
	}
	// Two seals of one answer differ (a fresh nonce each time).
	_, w, _ := SealAnswer(key, []byte(`{"query":"secret"}`))
	if bytes.Equal(v, w) {
		t.Fatal("two seals of the same answer are equal")
	}
	if _, _, err := SealAnswer("short", nil); err == nil {
		t.Fatal("sealed under something that is not a cache key")
	}
}
