// Package results is the model of one answer page: what searxgate reads
// from an instance, caches, merges and writes in every format.
//
// A Page holds the echoed query, the results, answers, corrections,
// infoboxes, suggestions and unresponsive engines. It has one shape whether
// the instance sent JSON or its HTML page; detect reads both into it.
// AppendJSONAs writes a Page in one of SearXNG's JSON shapes, with its
// keys: Classic (number_of_results, answers as strings, as until
// 2024-12), Current (answers as objects, no number_of_results, as since
// 2026-05), or Full
// (both kept: what searxgate caches and passes between its parts).
// ParsedURL gives the parsed_url tuple SearXNG writes for a link.
//
// Merge unites the answers of several instances the way SearXNG unites its
// engines. Results with the same normalised URL (SameURLKey) become one. Each
// gets SearXNG's score, and the list is ranked by it.
//
// Bound caps counts and sizes (bounds.go), so a Page stays small in any
// format. detect bounds every answer it reads, Merge what it unites. The
// results dropped are counted in Page.Dropped.
//
// Caveats:
//   - In the Classic shape an answer is one line of text with its link
//     appended (Answer.Classic); a typed answer becomes its texts
//     (translations) or its summary (weather), and one of a template not
//     known here is left out.
//   - A Page does not judge its links: detect keeps only http(s) links
//     before Bound is applied.
//   - AppendJSON writes the optional keys (publishedDate, thumbnail,
//     img_src) only when set, or when the upstream JSON had them empty
//     (Result.MarkEmpty).
package results
