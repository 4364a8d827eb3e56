// Package reader reads one web page for an agent: a guarded fetch, the
// page's main content, as Markdown.
//
// Read fetches an http(s) URL through the same address policy as the
// instances (egress.PublicAddr: loopback, private, link-local and other
// non-public addresses are refused unless AllowPrivate): the URL and every
// redirect are checked (scheme, literal addresses, localhost names), and the
// dialer checks every address a name resolves to at connect time, so a name
// that changes its answer cannot point the reader into the network it runs
// in. It says who it is (the same User-Agent as upstream searches), sends no
// cookies and no client data, goes through an outbound proxy only as
// Config.Proxy says (the target checked first, the proxy given the checked
// address; never the environment's proxy on its own), follows at most
// MaxRedirects redirects, and stops at MaxBytes and Timeout.
//
// HTML is reduced to its main content: scripts, styles, navigation,
// headers, footers, asides, forms, cookie banners, ads, sponsored and
// promoted blocks, newsletter boxes, skip links and headings' permalinks
// are dropped, then readability picks the article (falling back to
// <main>, <article> or <body> when it finds none) and html-to-markdown
// writes it with absolute links: links whose scheme is not http, https or
// mailto (file:, ftp:, javascript:, data:, …) keep their text without
// their URL, anchors without a target or a text leave nothing, and
// tracking pixels (0 or 1 pixel wide or high, known beacons) go. Text
// keeps its characters (no &lt; in prose or tables; Markdown escapes only
// where Markdown needs them), code blocks keep the language their
// highlighter named and each <code> of a <pre> that holds several is a
// block of its own, headings keep their levels (readability's h1 to h2
// undone), and the page's title heading (its first <h1>, or an <h2> its
// <title> names) heads the Markdown when readability took it away. Notes,
// warnings and their kin (Sphinx and DocBook admonitions, MkDocs,
// Docusaurus, GitHub alerts, Node.js stability notes, an aside that is a
// note) are kept, as quotations that start with their label
// ("> **Note:** …"). What an agent
// needs to cite the page is kept apart (Page: title, author, date, site
// name, canonical URL; Result.Header writes them). JSON is pretty-printed
// in a code block; XML, YAML, TOML and CSV come as code blocks; plain text
// and Markdown pass through; any other type is refused with ErrType.
//
// A PDF (application/pdf, or application/octet-stream that starts as one)
// is read with github.com/ledongthuc/pdf (pure Go) into Markdown-ish text:
// each page under a "[Page n]" line, its lines joined into paragraphs by
// their spacing and indents, headings by their size (or boldness) as #, ##,
// …, bulleted lists as "- " items, monospaced lines as code blocks, page
// numbers and running heads left out; so section, paragraphRange and
// readHeadings work on it as on a web page. Its Info dictionary gives the
// citation header's title, author and date; Page.Pages says how many
// pages were read of how many, and why reading stopped early. A PDF costs
// at most MaxBytes, its first PDFPages pages, PDFChars characters and
// PDFTime: the clock is read between pages and reading stops there with
// what was read; within a page the library's reads and the interpreter's
// operators stop once PDFTime has passed in real time. The PDF is read by
// reader/pdf, in a child process (Config.PDFWorker) whose memory, stack and
// time are bounded: what cannot be recovered in Go (running out of memory
// or stack) ends the child, never the reader. The library's panics are
// recovered into ErrType errors, and the numbers it would size
// allocations or loops by (cross-reference sizes, ToUnicode counts, their
// names' escapes decoded) are checked first; a page whose content decodes to more than
// 4 MiB (a drawing) is skipped, said so. An encrypted PDF that needs a
// password or is encrypted with AES-256 (the library decrypts RC4 and
// AES-128 files that open without one), one without a text layer (a scan:
// the reader runs no OCR) and a malformed one are ErrType errors that say
// which.
//
// Pages are cached (Cache: entries and bytes bounded, CacheTTL) so that an
// agent paging through a long page with StartChar costs one fetch (with
// NoCache none is kept, and every read fetches). Each host
// is read politely: at most PerHostInFlight fetches at once and
// PerHostPerMinute a minute. A read past either waits for its turn, first
// come first served, for at most half its Timeout and never past its
// caller's deadline (the fetch keeps the rest); Result.Waited says how
// long. A turn that cannot come within that is refused with a *BusyError
// that says when it comes.
//
// The character set is found as browsers find it: a byte order mark, the
// Content-Type's charset, an HTML page's <meta> in its first 1024 bytes;
// a page that declares none is UTF-8 when it is valid UTF-8, else
// windows-1252.
//
// Caveats: the reader does not run scripts, so pages built by JavaScript read
// as what their HTML holds. Lengths and offsets (StartChar, MaxLength) count
// characters (runes), not bytes. A PDF's text comes in the order its pages
// draw it (multi-column layouts drawn row by row, and tables, read as runs
// of words); a word hyphenated across lines keeps its hyphen; text in a
// font without a Unicode map reads as what its codes mean in Latin-1, or
// not at all.
package reader
