package proxy

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/pool"
)

// TestCauseWordsCoverEveryReason: the faces' one table of causes says
// every reason an attempt can end with, and every owner.
func TestCauseWordsCoverEveryReason(t *testing.T) {
	reasons := []pool.Reason{ReasonLinkToken, ReasonBusy, ReasonShutdown, ReasonAutocomplete}
	for _, r := range detect.Reasons() {
		reasons = append(reasons, pool.Reason(r))
	}
	for _, r := range reasons {
		if w, ok := causeWords[r]; !ok || w.happened == "" {
			t.Errorf("reason %q has no words", r)
		}
	}
	if len(causeWords) != len(reasons) {
		t.Errorf("%d reasons worded, %d known: a word for a reason that is not one", len(causeWords), len(reasons))
	}
	for _, o := range []pool.Owner{pool.OwnerInstance, pool.OwnerQuery, pool.OwnerClient, pool.OwnerGateway} {
		if ownerWords[o.String()] == "" {
			t.Errorf("owner %s has no words", o)
		}
	}
}

// TestAttemptExplain: an attempt said in words, case by case.
func TestAttemptExplain(t *testing.T) {
	until := time.Date(2026, 1, 2, 14, 5, 0, 0, time.UTC)
	cases := []struct {
		a    Attempt
		want []string
		not  []string
	}{
		{Attempt{Instance: "http://127.0.0.1:18556/", Own: true, Outcome: "failed", Reason: pool.Reason(detect.ConnRefused), Owner: "instance"},
			[]string{"your own instance http://127.0.0.1:18556/ refuses connections", "is it running"}, []string{"public"}},
		{Attempt{Instance: "https://a.example/", Outcome: "failed", Reason: pool.Reason(detect.Timeout), Owner: "instance", ElapsedMS: 4200},
			[]string{"public instance https://a.example/ did not answer within 4 s", "slow now"}, nil},
		{Attempt{Instance: "https://a.example/", Outcome: "refused", Reason: pool.Reason(detect.RateLimited), Owner: "instance", Until: until},
			[]string{"answered 429 Too Many Requests", "until 14:05:00 UTC"}, []string{"pass_ip"}},
		{Attempt{Instance: "http://own/", Own: true, Outcome: "refused", Reason: pool.Reason(detect.LimiterRedirect), Owner: "searxgate"},
			[]string{"turned the search away", "searxgate's doing", "pass_ip"}, nil},
		{Attempt{Instance: "https://a.example/", Outcome: "failed", Reason: pool.Reason(detect.ServerError), Owner: "query"},
			[]string{"server error", "the query's doing: it fails the same way on every instance"}, []string{"fails for now"}},
		{Attempt{Instance: "https://a.example/", Outcome: "skipped", Reason: pool.Reason(detect.BotChallenge), Owner: "instance", Until: until},
			[]string{"https://a.example/ is not asked until 14:05:00 UTC: it answered a bot challenge"}, nil},
		{Attempt{Instance: "https://a.example/", Outcome: "ok"}, nil, []string{"a"}},
	}
	for _, c := range cases {
		got := c.a.Explain()
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: %q lacks %q", c.a, got, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(got, w) {
				t.Errorf("%+v: %q says %q", c.a, got, w)
			}
		}
	}
}

// TestCauseLogOneLineAnInstanceAndCause: the log says a cause once for
// its instance, then again only after causeLogEvery with how many came
// meanwhile; another cause or instance has its own line.
func TestCauseLogOneLineAnInstanceAndCause(t *testing.T) {
	var buf strings.Builder
	l := slog.New(slog.NewTextHandler(&buf, nil))
	var c causeLog
	now := time.Unix(1_800_000_000, 0)
	refused := Attempt{Instance: "http://own/", Own: true, Outcome: "failed", Reason: pool.Reason(detect.ConnRefused), Owner: "instance"}
	for i := range 5 {
		c.log(l, refused, now.Add(time.Duration(i)*time.Second))
	}
	other := refused
	other.Reason = pool.Reason(detect.Timeout)
	c.log(l, other, now)
	c.log(l, refused, now.Add(causeLogEvery+time.Second))
	out := buf.String()
	if n := strings.Count(out, "reason=connection_refused"); n != 2 || !strings.Contains(out, "more_since_last_line=4") {
		t.Errorf("%d lines of the refused connection, want 2, the second with 4 more:\n%s", n, out)
	}
	if n := strings.Count(out, "reason=timeout"); n != 1 {
		t.Errorf("%d lines of the timeout, want 1", n)
	}
}
