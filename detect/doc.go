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
// ParseJSON and ParseHTML (goquery) read SearXNG's JSON, old and new
// shapes, and its simple theme's results page, 2024 and current markup,
// into sanitised Results (see the caveats). ParseJSON reads an answer in
// one pass (jsonScan, checking it by gjson.Valid's rules, handing each
// value over as a gjson.Result); most links are split without url.Parse
// (plainLink). Neither Classify nor the parsers keep a reference to the
// body: a caller may reuse its buffer once the verdict is made; Results.AppendJSON
// writes SearXNG's classic JSON, an upstream JSON result's other fields
// kept within bounds. ParseConfig reads an
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
//     it catches answers for another query, not poor rankings. Results
//     generated from the query are off topic too: one text repeated
//     (templated), or half the results made of the query's own words and
//     nothing else (echoes: any subset and order, with stop words and
//     numbers); a result with words of its own beside the query's is
//     never an echo. Accent
//     folding covers Latin-1, Latin Extended-A, Greek tonos and Cyrillic
//     ё; other scripts are only lower-cased, and words are split on
//     anything that is not a letter or digit, so a CJK query is matched as
//     whole runs of characters.
//   - The HTML page does not show a result's score or positions. A result
//     read from HTML gets its rank on the page as its one position
//     (1-based, in page order, counting only the results passed on) and
//     the score SearXNG itself gives a result one engine found at that
//     rank: searx/results.py's calculate_score sums
//     weight * len(positions) / position over the positions, weight 1.0,
//     so rank p scores 1/p (1, 0.5, 0.333…), as the JSON of the same
//     answer says. Ranks start at 1 on every page, page 2 included: the
//     page does not say how many results page 1 had, and SearXNG's own
//     JSON restarts its positions on each page too (they are the engines'
//     ranks for the page asked). A result several engines found scores
//     higher in SearXNG's JSON than its rank on the page tells. The empty
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
//   - Answers are sanitised where they are read (ParseJSON, ParseHTML),
//     so every format written from Results gets the same: a result whose
//     url is not an absolute http(s) URL with a host (no white space,
//     control or bidirectional control characters) is dropped, as are
//     such links of answers and infoboxes; thumbnail, img_src, iframe_src
//     and an infobox's img_src that fail the rule are blanked (relative
//     links such as SearXNG's /image_proxy ones included: they would
//     point at searxgate); parsed_url is always rebuilt from url;
//     bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E,
//     U+200F, U+061C; the set web's pages strip) are removed from every
//     text.
//   - Unknown fields of a result, infobox, infobox link or attribute are
//     written afresh, not passed on raw: at most MaxExtraKeys of them,
//     names up to 64 bytes, values nested at most MaxExtraDepth deep and
//     at most MaxExtraBytes long as written (a value beyond is dropped
//     with its key), strings without bidirectional controls, and a string
//     under a URL-named key (url, src, href, link, thumbnail,
//     torrentfile, *_url, *_src, *_link, at any depth) kept only if it is
//     an http(s) link (a magnetlink may be a magnet: link), else blanked;
//     at the top level such a field that is not a good link is dropped.
//     A JSON answer nested deeper than 64 levels anywhere is not read at
//     all (BadBody): validating it would cost a recursion as deep.
//   - Every answer is bounded where it is read and where answers are
//     merged (bounds.go): at most MaxResults results (the first ones),
//     texts cut at MaxFieldBytes on a rune boundary, links over
//     MaxURLBytes dropped or blanked, lists cut at MaxListItems (and
//     MaxInfoboxes, MaxUnresponsive), unknown fields at MaxExtraTotal per
//     object, and MaxAnswerBytes in all as written, escapes counted; the
//     results dropped are counted in Results.Dropped. So an answer
//     written in any format, fresh or from the cache, stays small.
package detect
