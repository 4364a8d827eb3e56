// Package detect turns one upstream SearXNG answer into a verdict the pool
// can learn from and, when the answer is good, into results in one shape,
// whether the instance sent JSON or its HTML page.
//
// Classify takes what came back (status, headers, decoded body, the format
// and the query asked) and returns a Verdict: OK with the results; Soft
// (reachable but useless: empty, off topic, engines down); Refused (rate
// limited, blocklisted, limiter redirect or front page, format disabled,
// forbidden, bot challenge, unavailable; with the Retry-After the server
// gave); or Failed (server error, unreadable body, too large; the caller
// uses Timeout and Transport for answers that never came).
//
// ParseJSON (gjson) and ParseHTML (goquery) read SearXNG's JSON, old and
// new shapes, and its simple theme's results page, 2024 and current
// markup, into Results; Results.AppendJSON writes SearXNG's classic JSON
// with nothing of an upstream JSON result lost. ParseConfig reads an
// instance's /config, ParseFormats the formats its results page offers,
// ParseRetryAfter the wait a refusal asks for.
//
// Caveats:
//   - Bot challenges are recognised by markers of the known interstitials
//     (Cloudflare, Anubis, DDoS-Guard, captcha walls). Body markers are
//     looked for only in answers that are not SearXNG answers, so a result
//     about Cloudflare cannot turn a good page into a challenge; an unknown
//     interstitial served with 200 is BadBody, not BotChallenge.
//   - A 403 on a non-HTML format is FormatDisabled (SearXNG's answer for a
//     format it does not serve) unless it is a CDN's block page.
//   - The off-topic rule is a heuristic (see OnTopic and OnTopicPercent):
//     it catches answers for another query, not poor rankings. Accent
//     folding covers Latin-1, Latin Extended-A, Greek tonos and Cyrillic
//     ё; other scripts are only lower-cased, and words are split on
//     anything that is not a letter or digit, so a CJK query is matched as
//     whole runs of characters.
//   - The HTML page does not show a result's score or positions: results
//     read from HTML have them zero and empty, in page order. The empty
//     content placeholder is recognised by its class (current markup) or
//     its English text.
//   - To read a results page fast, only its div#results (up to the
//     pagination, without inline SVG icons) and its query box are parsed;
//     a page where either is missing is parsed whole. Content that a
//     future theme moved out of div#results would not be read.
//   - Classify reads only JSON and HTML bodies; a 2xx answer in another
//     format is BadBody.
//   - Answers are kept as strings (the classic shape): an answer's link is
//     kept in its text as "text (url)".
//   - Links that are not absolute http(s) URLs are dropped: results, the
//     links of answers and infobox links.
package detect
