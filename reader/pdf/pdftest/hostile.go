package pdftest

import (
	"bytes"
	"fmt"
)

// Hostile are PDFs written to make a parser spend without end: each is
// under a kilobyte, and each, read by the PDF library in searxgate's own
// process, ended it (out of memory or out of stack) or kept it busy for
// minutes. Their names say how.
func Hostile() map[string][]byte {
	return map[string][]byte{
		// An xref stream's /Size, its name written with an escape (#69 is
		// i): the library sizes its table by it.
		"xref stream size escaped": xrefStream("/S#69ze 10000000000", nil),
		// Half a billion entries: survivable, at gigabytes.
		"xref stream size 5e8": xrefStream("/S#69ze 500000000", nil),
		// The subsections of an xref stream, its name escaped: the table
		// grows to the last object a subsection names.
		"xref stream index escaped": xrefStream("/Size 6 /I#6edex [0 5 4000000000 1]", []entry{{1, 9, 0}}),
		// A cross-reference table whose subsection line ends in a comment.
		"xref table with a comment": xrefTable("4000000000 1 % the subsection\n0000000009 00000 n \n"),
		// An object stream that holds itself: resolving any object in it
		// recurses without end.
		"object stream in itself": selfStream(),
	}
}

// entry is one row of an xref stream: type, field 2 and field 3.
type entry struct{ typ, f2, f3 int }

// body is the catalog, page tree and page the hostile files share.
const body = "1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n" +
	"2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n" +
	"3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>\nendobj\n"

// xrefStream writes the shared objects and an xref stream (object 4)
// whose dictionary has dict (its size fields) besides /Type, /W and /Root,
// with rows for objects 0 to 4 and then extra.
func xrefStream(dict string, extra []entry) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n")
	offs := []int{0, 0, 0, 0}
	for i := 1; i <= 3; i++ {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%s", objAt(i))
	}
	at := b.Len()
	rows := []entry{{0, 0, 255}, {1, offs[1], 0}, {1, offs[2], 0}, {1, offs[3], 0}, {1, at, 0}}
	rows = append(rows, extra...)
	data := encodeRows(rows)
	fmt.Fprintf(&b, "4 0 obj\n<< /Type /XRef %s /W [1 4 1] /Root 1 0 R /Length %d >>\nstream\n", dict, len(data))
	b.Write(data)
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", at)
	return b.Bytes()
}

// objAt is the shared object i, on its own.
func objAt(i int) string {
	objs := bytes.SplitAfter([]byte(body), []byte("endobj\n"))
	return string(objs[i-1])
}

func encodeRows(rows []entry) []byte {
	var data []byte
	for _, r := range rows {
		data = append(data, byte(r.typ), byte(r.f2>>24), byte(r.f2>>16), byte(r.f2>>8), byte(r.f2), byte(r.f3))
	}
	return data
}

// xrefTable writes the shared objects and a cross-reference table whose
// subsections are rows, as written.
func xrefTable(rows string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n" + body)
	at := b.Len()
	fmt.Fprintf(&b, "xref\n%strailer\n<< /Size 4 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", rows, at)
	return b.Bytes()
}

// selfStream writes a file whose page tree (object 5) is, by its xref
// stream, the first object of object stream 5.
func selfStream() []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n")
	cat := b.Len()
	b.WriteString("1 0 obj\n<< /Type /Catalog /Pages 5 0 R >>\nendobj\n")
	objstm := "5 0 << /Type /Pages /Kids [] /Count 0 >>"
	stm := b.Len()
	fmt.Fprintf(&b, "2 0 obj\n<< /Type /ObjStm /N 1 /First 4 /Length %d >>\nstream\n%s\nendstream\nendobj\n", len(objstm), objstm)
	at := b.Len()
	rows := []entry{{0, 0, 255}, {1, cat, 0}, {1, stm, 0}, {0, 0, 0}, {1, at, 0}, {2, 5, 0}}
	data := encodeRows(rows)
	fmt.Fprintf(&b, "4 0 obj\n<< /Type /XRef /Size 6 /W [1 4 1] /Root 1 0 R /Length %d >>\nstream\n", len(data))
	b.Write(data)
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", at)
	return b.Bytes()
}
