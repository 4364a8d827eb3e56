package main

//go:generate sh -c "go run . help settings > ../../docs/settings.md"

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
)

// settingNotes say more of a setting than its --help line: the settings
// page puts them after it.
var settingNotes = map[string]string{
	"cache-ttl":                 "Nothing is kept in Redis either, and nothing is served stale.",
	"image-proxy-allow-private": "Without it such thumbnails are dropped.",
	"mcp-token":                 "See [security.md](security.md#mcp-access).",
	"client-rate":               "Answers from the cache and searches your own instances answer are not counted. Never more than the public pool serves (its instances times their budget: with 3 public instances at most 30 a minute and 30 at once).",
	"trust-proxy":               "X-Forwarded-For is read from the right through trusted hops.",
	"max-conns-per-ip":          "Past it, 429 and the connection closed. See [self-hosting.md](self-hosting.md#behind-a-reverse-proxy).",
	"redis":                     "See [self-hosting.md](self-hosting.md#more-than-one-replica).",
	"secret":                    "See [security.md](security.md#redis-and-the-shared-secret).",
	"contact":                   "searxgate warns at start when it is not set and public instances are in the pool.",
}

// settingDefaults are the defaults the settings page gives where the
// program's depends on the machine or reads better in words.
var settingDefaults = map[string]string{
	"data":       "`$XDG_STATE_HOME/searxgate`, else `~/.local/state/searxgate`",
	"public-url": "the address each request used",
}

const settingsIntro = `# Settings

This page is generated from searxgate's own flag definitions
(` + "`go generate ./cmd/searxgate`" + `, which runs ` + "`searxgate help settings`" + `); a test
fails when it differs from them. Every flag of ` + "`searxgate serve`" + ` has an
environment variable; a flag wins over its variable. ` + "`searxgate --help`" + `
lists the same. A ` + "`SEARXGATE_*`" + ` variable that is no setting (a typo) is
warned about at start, with the nearest known name (` + "`SEARXGATE_CONTATC is\nno setting of searxgate and is ignored: did you mean SEARXGATE_CONTACT?`" + `).
`

// otherVariables are the variables searxgate reads that are no flag's.
var otherVariables = [][2]string{
	{"HTTPS_PROXY, https_proxy", "the outbound proxy (`http://[user:password@]host:port`) for targets on any port but 80: instances, the directory, the page reader, the image proxy; searxgate tunnels through it with CONNECT to the address its guard checked ([self-hosting.md](self-hosting.md#your-own-searxng-first))"},
	{"HTTP_PROXY, http_proxy", "the same for targets on port 80"},
	{"NO_PROXY, no_proxy", "hosts reached directly, never past the address guard (Go's rules; loopback never goes through the proxy)"},
	{"GOMEMLIMIT", "Go's soft memory limit; without it searxgate sets the caches' bounds plus 64 MiB ([state.md](state.md))"},
	{"XDG_STATE_HOME", "where `--data` defaults to (`$XDG_STATE_HOME/searxgate`)"},
}

const settingsOutro = `
` + "`searxgate version`" + ` prints the version, which the User-Agent also carries:
` + "`make build`" + ` stamps it from ` + "`git describe`" + `; a ` + "`go install`" + ` build reports
its module version, else its commit (` + "`0.1.0-dev+abc1234-dirty`" + `).
`

// writeSettingsDoc writes docs/settings.md: the subcommands, every flag of
// serve with its variable, default and help, and the other subcommands'
// flags as their --help gives them.
func writeSettingsDoc(w io.Writer) {
	fmt.Fprint(w, settingsIntro, "\n## Subcommands\n\n| command | what it does |\n|---|---|\n")
	for _, c := range commands {
		fmt.Fprintf(w, "| `%s` | %s |\n", c.use, c.what)
	}
	fmt.Fprint(w, "\n## Flags of serve\n\n| flag | env | default | what it is |\n|---|---|---|---|\n")
	def := defaultConfig()
	for _, o := range def.options() {
		d, ok := settingDefaults[o.name]
		if !ok {
			d = "not set"
			if v := valueText(o.ptr); v != "" {
				d = "`" + v + "`"
			}
		}
		what := o.usage
		if n := settingNotes[o.name]; n != "" {
			what += ". " + n
		}
		fmt.Fprintf(w, "| `--%s` | `%s` | %s | %s |\n", o.name, envName(o.name), d, strings.ReplaceAll(what, "|", `\|`))
	}
	for _, sub := range []string{"mcp", "healthcheck", "sim"} {
		var out bytes.Buffer
		Main(context.Background(), []string{sub, "--help"}, &out, &out, func(string) string { return "" })
		fmt.Fprintf(w, "\n## Flags of %s\n\n```\n%s```\n", sub, out.String())
	}
	fmt.Fprint(w, "\n## Other variables\n\n| variable | what it is |\n|---|---|\n")
	for _, v := range otherVariables {
		fmt.Fprintf(w, "| `%s` | %s |\n", strings.ReplaceAll(v[0], ", ", "`, `"), v[1])
	}
	fmt.Fprint(w, settingsOutro)
}
