// Package pdf reads a PDF's text as Markdown for the reader: pages,
// paragraphs, headings by size, lists and code blocks, with the title,
// author and date of its Info dictionary.
//
// Extract reads in this process, with the parser's panics recovered and
// the numbers it sizes allocations by checked first. Some files still
// exhaust memory or stack, which Go cannot recover from, so searxgate
// reads every PDF through a Worker: a child process per PDF, bounded in
// memory, stack and time, that can fail without taking searxgate along.
// ServeIfWorker, called first in main, makes the child.
package pdf
