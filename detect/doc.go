// Package detect judges one upstream SearXNG answer, and reads its results
// into a results.Page, whether the instance sent JSON or its HTML page. The
// model itself (Page, AppendJSON, Merge, the bounds) is package results.
//
// Classify takes what came back (an Answer: status, headers, decoded body,
// format, query) and returns a Verdict of one Kind:
//   - OK, with the results;
//   - Soft: reachable but useless (empty, off topic, engines down);
//   - Refused: rate limited, blocklisted, limiter redirect, format
//     disabled, forbidden, bot challenge, unavailable; with the server's
//     Retry-After;
//   - Failed: server error, unreadable body, too large; the caller uses
//     Timeout and Transport for answers that never came;
//   - Redirect: the query's own answer is a redirect off the instance (an
//     external bang, feeling lucky). It says nothing of the instance.
//
// ParseJSON reads SearXNG's JSON, old and new shapes, in one pass.
// ParseHTML (goquery) reads the simple theme's results page, 2024 and
// current markup. ParseConfig reads an instance's /config,
// ParseFormats the formats its page offers, ParseRetryAfter the wait a
// refusal asks for. ParseQuery reads a query's SearXNG syntax once, into a
// Query. Neither Classify nor the parsers keep the body: its
// buffer may be reused once the verdict is made.
//
// Every answer is sanitised and bounded where it is read, so every format
// written from its Page gets the same. A result whose URL is not an absolute
// http(s) link is dropped; other bad links are blanked. Bidirectional
// controls are stripped from every text. Unknown fields are written afresh
// within limits (sanitize.go). Counts and sizes are capped (Page.Bound),
// with the results dropped counted in Page.Dropped. So an answer stays
// small in any format, fresh or from the cache.
//
// Caveats:
//   - Bot challenges are known by the markers of known interstitials. Body
//     markers count only in answers that are not SearXNG's, so a result
//     about Cloudflare is no challenge. An unknown interstitial served with
//     200 is BadBody.
//   - A 403 on a non-HTML format is FormatDisabled, unless it is a CDN's
//     block page.
//   - Off topic is a heuristic (OnTopic): it catches answers for another
//     query, not poor rankings. Results made from the query are off topic
//     too: one text repeated, or half of them only the query's words.
//   - The HTML page shows no score or positions. A result read from it gets
//     its rank on the page and the score SearXNG gives that rank (1/rank).
//   - Only a page's div#results and query box are parsed, when both are
//     found. Content a future theme moved out of div#results would be
//     missed.
//   - Classify reads only JSON and HTML bodies. A 2xx answer in another
//     format is BadBody.
//   - Answers are kept as SearXNG's objects (results.Answer), typed ones
//     (translations, the weather) whole from JSON. From a page, an
//     answer's engine is not shown for a text answer, and the weather's
//     measures are shown formatted for the page's locale: only its
//     summary lines are read. A translation's lists are told apart by
//     their headings, in every language SearXNG's interface has.
//   - A page does not show an infobox's id or engine.
package detect
