// Package pdf reads a PDF's text as Markdown for the reader. It keeps
// pages, paragraphs, headings by size, lists and code blocks. Doc also
// carries the title, author and date of the file's Info dictionary.
//
// Extract reads in this process. It recovers the parser's panics and checks
// the numbers the parser sizes allocations by. Some files still exhaust
// memory or stack, and Go cannot recover from that. So searxgate reads
// every PDF through a Worker: one child process per PDF, bounded in memory,
// stack and time. A child can fail without taking searxgate along. The
// workers are shared in turns among the clients waiting (Worker.Read
// names the client), and a read whose context ends leaves the queue or
// has its child killed.
// ServeIfWorker, called first in main, makes a process a child.
//
// Caveats: text comes in the order the pages draw it, so columns and tables
// may read as runs of words. A font without a Unicode map reads as Latin-1,
// or not at all.
package pdf
