package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// placeholders name the value a flag takes in --help; a flag not named
// here shows its kind (string, n, duration, or nothing for a switch).
var placeholders = map[string]string{
	"listen":      "host:port",
	"data":        "dir",
	"directory":   "url|file|none",
	"instance":    "url",
	"contact":     "url|email",
	"strategy":    "auto|ewma|primary_backup",
	"admin-token": "token",
	"public-url":  "url",
	"log-format":  "text|json",
	"log-level":   "debug|info|warn|error",
	"trust-proxy": "ip|cidr",

	"api-key":      "key",
	"api-key-file": "file",
}

// placeholder is what --help shows after --name: nothing for a switch.
func placeholder(o option) string {
	if p, ok := placeholders[o.name]; ok {
		return p
	}
	switch o.ptr.(type) {
	case *bool:
		return ""
	case *int:
		return "n"
	case *time.Duration:
		return "duration"
	case *[]string:
		return "value"
	}
	return "string"
}

// printHelp writes searxgate's help: the subcommands, then every flag of
// serve as --name value, with its environment variable and its default.
func printHelp(w io.Writer) {
	fmt.Fprint(w, "searxgate answers SearXNG searches from a pool of public SearXNG instances.\n\nUsage:\n")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.use))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.use, c.what)
	}
	fmt.Fprint(w, "\nFlags of serve (each also read from its environment variable; a flag wins):\n")
	def := defaultConfig()
	for _, o := range def.options() {
		line := "  --" + o.name
		if p := placeholder(o); p != "" {
			line += " " + p
		}
		fmt.Fprintln(w, line)
		for _, l := range wrapWords(o.usage, 72) {
			fmt.Fprintln(w, "      "+l)
		}
		d := valueText(o.ptr)
		if d == "" {
			d = "not set"
		}
		fmt.Fprintf(w, "      env %s, default %s\n", envName(o.name), d)
	}
}

// wrapWords breaks s into lines of at most width bytes, at spaces (a longer
// word gets a line of its own).
func wrapWords(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// valueText is an option's value as --help shows its default.
func valueText(ptr any) string {
	switch p := ptr.(type) {
	case *string:
		return *p
	case *int:
		return strconv.Itoa(*p)
	case *bool:
		return strconv.FormatBool(*p)
	case *time.Duration:
		return p.String()
	case *[]string:
		return strings.Join(*p, ",")
	}
	return ""
}
