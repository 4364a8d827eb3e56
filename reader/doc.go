// Package reader reads one web page for an agent: a guarded fetch, then the
// page's main content as Markdown.
//
// Reader.Read fetches an http(s) URL under the same address policy as the
// instances. The URL and every redirect are checked, and the dialer checks
// every address a name resolves to when it connects (egress.Fetcher). So
// no URL, redirect or changing name can point the reader into its own
// network, unless AllowPrivate. It sends searxgate's User-Agent and nothing
// of the client: no cookies, no client data. It uses an outbound proxy only
// as Config.Proxy says, never the environment's on its own. It follows at
// most MaxRedirects redirects and stops at MaxBytes and Timeout.
//
// What it makes of each type:
//   - HTML is reduced to its main content (Extract): clutter is dropped,
//     readability picks the article, and html-to-markdown writes it with
//     absolute links. Links to schemes other than http, https and mailto
//     keep only their text. Notes and warnings stay, as quotations that
//     start with their label.
//   - A PDF is read by package reader/pdf, in a child process
//     (Config.PDFWorker). It costs at most MaxBytes, PDFPages pages,
//     PDFChars characters and PDFTime. An encrypted, scanned or malformed
//     PDF is an ErrType error that says which.
//   - JSON is pretty-printed in a code block. XML, YAML, TOML and CSV come
//     as code blocks. Plain text and Markdown pass through.
//   - Any other type is refused with ErrType.
//
// What an agent needs to cite the page is kept apart: Page holds title,
// author, date, site name and canonical URL, and Result.Header writes them.
// Section, ParagraphRange and ReadHeadings work alike on web pages and
// PDFs.
//
// Pages are cached (Cache, bounded, CacheTTL), so paging through a long
// page with StartChar costs one fetch; NoCache keeps none. Each host is
// read politely: at most PerHostInFlight fetches at once and
// PerHostPerMinute a minute. Past either, a read waits its turn for at
// most half its Timeout, and Result.Waited says how long. A turn that
// cannot come by then is refused with a *BusyError that says when.
//
// What clients share is shared per client (Request.Client): a host's
// turns and the PDF workers go round the clients waiting (the one holding
// fewest first, then the one served longest ago), so one client's queue
// never holds back another's read by more than one read. The bodies of
// PDFs being read are bounded, all clients together (QueueBytes) and
// each (ClientQueueBytes); past either a read is refused before its body
// is read, with a *QueueError. A read whose context ends leaves its queue
// and stops its PDF worker. Config.Admit, when set, limits each client
// (a refused read is a *LimitedError), and a PDF's worker time counts
// against it.
//
// Caveats:
//   - The reader runs no scripts: a page built by JavaScript reads as its
//     HTML.
//   - Lengths and offsets (StartChar, MaxLength) count characters, not
//     bytes.
//   - A PDF's text comes in the order its pages draw it: columns and tables
//     may read as runs of words.
//   - With no charset declared, a page is UTF-8 when valid, else
//     windows-1252.
package reader
