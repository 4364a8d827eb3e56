package web

import (
	"bufio"
	"testing"

	"github.com/valyala/fasthttp"
)

// raw sends req, as raw bytes, and returns the answer's status.
func (c *tester) raw(req string) int {
	c.t.Helper()
	conn, err := c.ln.Dial()
	if err != nil {
		c.t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(req)); err != nil {
		c.t.Fatal(err)
	}
	var resp fasthttp.Response
	if err := resp.Read(bufio.NewReader(conn)); err != nil {
		c.t.Fatal(err)
	}
	return resp.StatusCode()
}

// TestHeaderNamesValidated: a header whose name is not an HTTP token (a
// space, a control character, a separator) is answered 400; good names,
// any case, pass.
func TestHeaderNamesValidated(t *testing.T) {
	_, c := serve(t, Config{Search: &fakeSearch{}})
	for _, tc := range []struct {
		header string
		want   int
	}{
		{"X-Good: 1", 200},
		{"x-good_one.2~!#$%&'*+^`|: 1", 200},
		{"Bad Name: x", 400},
		{"Bad\tName: x", 400},
		{"Bad(Name): x", 400},
		{"Bad\"Name: x", 400},
		{"Bad/Name: x", 400},
		{"Bad\x7fName: x", 400},
		{"Badé: x", 400},
	} {
		if got := c.raw("GET /healthz HTTP/1.1\r\nHost: gateway.test\r\n" + tc.header + "\r\n\r\n"); got != tc.want {
			t.Errorf("%q: status %d, want %d", tc.header, got, tc.want)
		}
	}
}
